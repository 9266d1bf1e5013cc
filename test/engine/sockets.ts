/**
 * Real sockets that fail the way networks do, for the errors a user sees when the service cannot
 * answer: a server that never answers, a closed port, a connection reset, a TLS server with a
 * certificate nobody trusts. Each returns a Base URL and a stop().
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';

export interface FailingServer {
	baseUrl: string;
	/** TCP connections accepted so far (each try of a request opens one). */
	connections: () => number;
	stop: () => Promise<void>;
}

async function listen(server: net.Server): Promise<number> {
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return (server.address() as net.AddressInfo).port;
}

function tracked(server: net.Server, protocol: 'http' | 'https', port: number): FailingServer {
	const sockets = new Set<net.Socket>();
	let count = 0;
	server.on('connection', (socket: net.Socket) => {
		count++;
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
		socket.on('error', () => {});
	});
	return {
		baseUrl: `${protocol}://127.0.0.1:${port}`,
		connections: () => count,
		stop: async () => {
			for (const socket of sockets) socket.destroy();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

/** Accepts connections and reads requests, but never answers. */
export async function silentServer(): Promise<FailingServer> {
	const server = net.createServer((socket) => socket.resume());
	const port = await listen(server);
	return tracked(server, 'http', port);
}

/** Resets (TCP RST) every connection as soon as a request arrives. */
export async function resettingServer(): Promise<FailingServer> {
	const server = net.createServer((socket) => {
		socket.once('data', () => socket.resetAndDestroy());
	});
	const port = await listen(server);
	return tracked(server, 'http', port);
}

/** A port nothing listens on: bound once to get a free number, then closed. */
export async function closedPort(): Promise<FailingServer> {
	const server = net.createServer();
	const port = await listen(server);
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return { baseUrl: `http://127.0.0.1:${port}`, connections: () => 0, stop: async () => {} };
}

/** A self-signed certificate for 127.0.0.1, made with openssl for this run only. */
function selfSigned(): { key: Buffer; cert: Buffer } {
	const dir = mkdtempSync(join(tmpdir(), 'outreach-tls-'));
	try {
		execFileSync(
			'openssl',
			[
				'req',
				'-x509',
				'-newkey',
				'rsa:2048',
				'-nodes',
				'-days',
				'1',
				'-subj',
				'/CN=127.0.0.1',
				'-keyout',
				join(dir, 'key.pem'),
				'-out',
				join(dir, 'cert.pem'),
			],
			{ stdio: 'ignore' },
		);
		return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/** An HTTPS server whose certificate is self-signed: the TLS handshake fails on the client. */
export async function badCertServer(): Promise<FailingServer> {
	const server = tls.createServer(selfSigned(), (socket) => socket.end());
	const port = await listen(server);
	return tracked(server, 'https', port);
}
