/**
 * A scripted OpenAI-compatible chat model on 127.0.0.1: n8n's OpenAI Chat Model node is pointed at it, so
 * n8n's own AI Agent loop runs without any network. Each POST /v1/chat/completions gets the next scripted
 * answer (built from the request, e.g. to pick the tool by the name n8n gave it); every request is kept
 * for the test to inspect. Answers plain JSON, or server-sent events when the request asks to stream.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
	model: string;
	stream?: boolean;
	messages: Array<{
		role: string;
		content: unknown;
		tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
		tool_call_id?: string;
	}>;
	tools?: Array<{
		type: 'function';
		function: { name: string; description?: string; parameters?: Record<string, unknown> };
	}>;
	[key: string]: unknown;
}

export type ScriptedAnswer =
	| { toolCall: { name: string; arguments: Record<string, unknown> } }
	| { content: string };

export interface ModelServer {
	/** The base URL n8n's OpenAI node takes (ends in /v1). */
	baseUrl: string;
	requests: ChatRequest[];
	/** Sets the answers for the next requests, in order; requests beyond them get an HTTP 500. */
	script(answers: Array<(request: ChatRequest) => ScriptedAnswer>): void;
	stop(): Promise<void>;
}

function completion(answer: ScriptedAnswer, index: number) {
	const message =
		'toolCall' in answer
			? {
					role: 'assistant',
					content: null,
					tool_calls: [
						{
							id: `call_${index}`,
							type: 'function',
							function: {
								name: answer.toolCall.name,
								arguments: JSON.stringify(answer.toolCall.arguments),
							},
						},
					],
				}
			: { role: 'assistant', content: answer.content };
	return { message, finishReason: 'toolCall' in answer ? 'tool_calls' : 'stop' };
}

export async function startModelServer(): Promise<ModelServer> {
	const requests: ChatRequest[] = [];
	let answers: Array<(request: ChatRequest) => ScriptedAnswer> = [];
	const server = http.createServer((req, res) => {
		let raw = '';
		req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
		req.on('end', () => {
			if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
				res.writeHead(404, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
				return;
			}
			const request = JSON.parse(raw) as ChatRequest;
			requests.push(request);
			const next = answers.shift();
			if (!next) {
				res.writeHead(500, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: { message: 'the script has no more answers' } }));
				return;
			}
			const { message, finishReason } = completion(next(request), requests.length);
			const base = {
				id: `chatcmpl-${requests.length}`,
				created: Math.floor(Date.now() / 1000),
				model: request.model,
			};
			if (!request.stream) {
				res.writeHead(200, { 'content-type': 'application/json' });
				res.end(
					JSON.stringify({
						...base,
						object: 'chat.completion',
						choices: [{ index: 0, message, finish_reason: finishReason }],
						usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
					}),
				);
				return;
			}
			res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
			const chunk = (delta: unknown, finish: string | null) =>
				`data: ${JSON.stringify({
					...base,
					object: 'chat.completion.chunk',
					choices: [{ index: 0, delta, finish_reason: finish }],
				})}\n\n`;
			const delta = message.tool_calls
				? { role: 'assistant', tool_calls: message.tool_calls.map((c, i) => ({ index: i, ...c })) }
				: { role: 'assistant', content: message.content };
			res.write(chunk(delta, null));
			res.write(chunk({}, finishReason));
			res.end('data: [DONE]\n\n');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		requests,
		script: (next) => {
			answers = [...next];
		},
		stop: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
