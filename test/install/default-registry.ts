/**
 * The local registry presented at npm's default address, for one n8n only.
 *
 * n8n's installer (Settings -> Community Nodes, N8N_COMMUNITY_PACKAGES) refuses any registry other than
 * https://registry.npmjs.org without an enterprise licence, and passes that address to npm explicitly
 * (`npm pack <name>@<version> --registry=https://registry.npmjs.org`). So the n8n under test gets, in its
 * environment only:
 * - HTTPS_PROXY / npm's https-proxy pointing at this proxy on loopback (n8n's HTTP client and npm both
 *   honour it; NO_PROXY keeps 127.0.0.1 direct, for the sandbox API);
 * - a certificate authority the test makes (openssl), trusted through NODE_EXTRA_CA_CERTS and npm's cafile.
 *
 * The proxy terminates TLS for registry.npmjs.org with a certificate from that authority and answers from the
 * local verdaccio. Every other destination is refused (403) and recorded: nothing is forwarded anywhere else,
 * so neither the real registry nor any other host sees a request.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import path from 'node:path';

import { HOST, run } from '../n8n/runtime';

export const DEFAULT_REGISTRY_HOST = 'registry.npmjs.org';

export interface Certificates {
	caFile: string;
	key: Buffer;
	cert: Buffer;
}

/** A throwaway certificate authority and a certificate for registry.npmjs.org signed by it. */
export async function makeCertificates(dir: string): Promise<Certificates> {
	fs.mkdirSync(dir, { recursive: true });
	const file = (name: string) => path.join(dir, name);
	const openssl = (args: string[]) => run('openssl', args, { cwd: dir, timeoutMs: 60_000 });
	await openssl(
		['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj'].concat([
			'/CN=outreach install test CA',
			'-keyout',
			file('ca.key'),
			'-out',
			file('ca.pem'),
		]),
	);
	await openssl(
		['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${DEFAULT_REGISTRY_HOST}`].concat([
			'-keyout',
			file('server.key'),
			'-out',
			file('server.csr'),
		]),
	);
	fs.writeFileSync(
		file('server.ext'),
		`subjectAltName=DNS:${DEFAULT_REGISTRY_HOST}\nextendedKeyUsage=serverAuth\n`,
	);
	await openssl(
		['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem')]
			.concat(['-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2'])
			.concat(['-extfile', file('server.ext'), '-out', file('server.pem')]),
	);
	return {
		caFile: file('ca.pem'),
		key: fs.readFileSync(file('server.key')),
		cert: fs.readFileSync(file('server.pem')),
	};
}

export interface ProxyRecord {
	/** `registry.npmjs.org GET /n8n-nodes-outreach-automation -> 200` */
	served: string[];
	/** Destinations refused (host:port or URL); none of them was contacted. */
	refused: string[];
}

export class DefaultRegistryProxy {
	readonly record: ProxyRecord = { served: [], refused: [] };
	private server?: http.Server;
	private tls?: https.Server;
	private readonly sockets = new Set<net.Socket>();
	port = 0;

	constructor(
		/** The local verdaccio's URL (http://127.0.0.1:<port>). */
		readonly upstream: string,
		readonly certificates: Certificates,
	) {}

	get url(): string {
		return `http://${HOST}:${this.port}`;
	}

	/** The environment that points one n8n (and the npm it runs) at this proxy, and nothing else. */
	env(): Record<string, string> {
		return {
			HTTPS_PROXY: this.url,
			https_proxy: this.url,
			HTTP_PROXY: this.url,
			http_proxy: this.url,
			npm_config_https_proxy: this.url,
			npm_config_proxy: this.url,
			npm_config_noproxy: `${HOST},localhost`,
			NODE_EXTRA_CA_CERTS: this.certificates.caFile,
			npm_config_cafile: this.certificates.caFile,
		};
	}

	/** The same, as an .npmrc (for npm commands n8n runs with a stripped environment). */
	npmrc(): string {
		return [
			`https-proxy=${this.url}`,
			`proxy=${this.url}`,
			`noproxy=${HOST},localhost`,
			`cafile=${this.certificates.caFile}`,
			'update-notifier=false',
			'',
		].join('\n');
	}

	async start(): Promise<void> {
		this.tls = https.createServer(
			{ key: this.certificates.key, cert: this.certificates.cert },
			(req, res) => this.answer(req, res),
		);
		const server = http.createServer((req, res) => {
			// A plain-HTTP proxy request (absolute URL): refused, never fetched.
			this.record.refused.push(`${req.method} ${req.url}`);
			res.writeHead(403).end('refused by the install test proxy');
		});
		server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
			this.sockets.add(socket);
			socket.once('close', () => this.sockets.delete(socket));
			socket.on('error', () => undefined);
			if (req.url !== `${DEFAULT_REGISTRY_HOST}:443`) {
				this.record.refused.push(`CONNECT ${req.url}`);
				socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
				return;
			}
			socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
			if (head.length) socket.unshift(head);
			this.tls!.emit('connection', socket);
		});
		server.on('connection', (socket: net.Socket) => {
			this.sockets.add(socket);
			socket.once('close', () => this.sockets.delete(socket));
		});
		this.server = server;
		await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
		this.port = (server.address() as net.AddressInfo).port;
	}

	/** A request that reached "registry.npmjs.org": answered by the local verdaccio, as that host. */
	private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
		const target = new URL(req.url ?? '/', this.upstream);
		const headers = { ...req.headers, host: DEFAULT_REGISTRY_HOST, 'x-forwarded-proto': 'https' };
		const upstream = http.request(target, { method: req.method, headers }, (answer) => {
			this.record.served.push(
				`${DEFAULT_REGISTRY_HOST} ${req.method} ${req.url} -> ${answer.statusCode}`,
			);
			res.writeHead(answer.statusCode ?? 502, answer.headers);
			answer.pipe(res);
		});
		upstream.on('error', (error) => {
			// The local registry is down: answer as a failing registry would.
			this.record.served.push(`${DEFAULT_REGISTRY_HOST} ${req.method} ${req.url} -> 502`);
			if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
			res.end(`local registry unreachable: ${error.message}`);
		});
		req.pipe(upstream);
	}

	async stop(): Promise<void> {
		for (const socket of this.sockets) socket.destroy();
		await new Promise<void>((resolve) =>
			this.server ? this.server.close(() => resolve()) : resolve(),
		);
		this.tls?.close();
	}
}
