/**
 * One loopback port per n8n process in front of the sandbox: the credential's Base URL is an expression reading
 * an environment variable that differs per process, so every API request says which process sent it (the
 * sandbox alone cannot tell main from the workers). Requests and answers pass through unchanged.
 */
import http from 'node:http';

import { HOST } from '../n8n/runtime';

export interface ForwardedRequest {
	/** The process that sent it: the name its port was opened for. */
	from: string;
	method: string;
	/** Path and query, e.g. /api/v1/messages?lead_id=ld_1 */
	url: string;
	body: Record<string, unknown> | undefined;
	status: number;
	at: number;
}

export interface Forwarder {
	urls: Record<string, string>;
	log: ForwardedRequest[];
	stop(): Promise<void>;
}

export async function startForwarder(target: string, names: string[]): Promise<Forwarder> {
	const upstream = new URL(target);
	const agent = new http.Agent({ keepAlive: true });
	const log: ForwardedRequest[] = [];
	const servers: http.Server[] = [];
	const urls: Record<string, string> = {};
	for (const from of names) {
		const server = http.createServer((req, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (chunk: Buffer) => chunks.push(chunk));
			req.on('end', () => {
				const raw = Buffer.concat(chunks);
				let body: Record<string, unknown> | undefined;
				try {
					body = raw.length ? (JSON.parse(raw.toString()) as Record<string, unknown>) : undefined;
				} catch {
					body = undefined;
				}
				const out = http.request(
					{
						host: upstream.hostname,
						port: upstream.port,
						method: req.method,
						path: req.url,
						headers: { ...req.headers, host: upstream.host },
						agent,
					},
					(answer) => {
						log.push({
							from,
							method: req.method ?? '',
							url: req.url ?? '',
							body,
							status: answer.statusCode ?? 0,
							at: Date.now(),
						});
						res.writeHead(answer.statusCode ?? 502, answer.headers);
						answer.pipe(res);
					},
				);
				out.on('error', () => {
					log.push({
						from,
						method: req.method ?? '',
						url: req.url ?? '',
						body,
						status: 0,
						at: Date.now(),
					});
					res.destroy();
				});
				out.end(raw);
			});
		});
		await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
		servers.push(server);
		urls[from] = `http://${HOST}:${(server.address() as { port: number }).port}`;
	}
	return {
		urls,
		log,
		async stop() {
			for (const server of servers) {
				server.closeAllConnections();
				await new Promise<void>((resolve) => server.close(() => resolve()));
			}
			agent.destroy();
		},
	};
}
