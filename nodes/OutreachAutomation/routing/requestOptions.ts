import type { IExecuteFunctions, IHttpRequestOptions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/**
 * The "Request Options" setting n8n adds to declarative nodes, declared here because this node runs
 * its own execute(): same name, fields and defaults, so workflows saved with them keep working
 * (wording as n8n's verification lint requires).
 */
export const requestOptionsProperty: INodeProperties = {
	displayName: 'Request Options',
	name: 'requestOptions',
	type: 'collection',
	isNodeSetting: true,
	placeholder: 'Add Option',
	default: {},
	options: [
		{
			displayName: 'Batching',
			name: 'batching',
			placeholder: 'Add Batching',
			type: 'fixedCollection',
			typeOptions: { multipleValues: false },
			default: { batch: {} },
			options: [
				{
					displayName: 'Batching',
					name: 'batch',
					values: [
						{
							displayName: 'Items per Batch',
							name: 'batchSize',
							type: 'number',
							typeOptions: { minValue: -1 },
							default: 50,
							description:
								'Input will be split in batches to throttle requests. -1 for disabled. 0 will be treated as 1.',
						},
						{
							displayName: 'Batch Interval (Ms)',
							name: 'batchInterval',
							type: 'number',
							typeOptions: { minValue: 0 },
							default: 1000,
							description: 'Time (in milliseconds) between each batch of requests. 0 for disabled.',
						},
					],
				},
			],
		},
		{
			displayName: 'Ignore SSL Issues (Insecure)',
			name: 'allowUnauthorizedCerts',
			type: 'boolean',
			noDataExpression: true,
			default: false,
			description: 'Whether to connect even if SSL certificate validation is not possible',
		},
		{
			displayName: 'Proxy',
			name: 'proxy',
			type: 'string',
			default: '',
			placeholder: 'e.g. http://myproxy:3128',
			description:
				'HTTP proxy to use. If authentication is required it can be defined as follow: http://username:password@myproxy:3128.',
		},
		{
			displayName: 'Timeout',
			name: 'timeout',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 10000,
			description:
				'Time in ms to wait for the server to send response headers (and start the response body) before aborting the request',
		},
	],
};

export interface RequestSettings {
	/** Items started together before waiting `batchInterval` ms; 0 when not batching. */
	batchSize: number;
	batchInterval: number;
	transport: Pick<IHttpRequestOptions, 'timeout' | 'proxy' | 'skipSslCertificateValidation'>;
}

interface Stored {
	batching?: { batch?: { batchSize?: number; batchInterval?: number } };
	allowUnauthorizedCerts?: boolean | string;
	proxy?: string;
	timeout?: number;
}

function proxyOf(ctx: IExecuteFunctions, proxy: string): IHttpRequestOptions['proxy'] {
	let url: URL;
	try {
		url = new URL(proxy.trim());
	} catch {
		url = new URL('invalid:');
	}
	if (!/^https?:$/.test(url.protocol) || !url.hostname) {
		throw new NodeOperationError(ctx.getNode(), 'Request Options > Proxy is not a valid URL', {
			description: 'Use the form http://host:port or http://username:password@host:port.',
		});
	}
	const protocol = url.protocol.replace(/:$/, '');
	return {
		host: url.hostname,
		port: Number(url.port || (protocol === 'https' ? 443 : 80)),
		protocol,
		...(url.username
			? {
					auth: {
						username: decodeURIComponent(url.username),
						password: decodeURIComponent(url.password),
					},
				}
			: {}),
	};
}

/** The node's Request Options as n8n's declarative nodes read them (from the first item). */
export function readRequestSettings(ctx: IExecuteFunctions): RequestSettings {
	const stored = ctx.getNodeParameter('requestOptions', 0, {}) as Stored;
	const batch = stored.batching?.batch ?? {};
	const interval = Number(batch.batchInterval ?? 0);
	const size = Number(batch.batchSize ?? 50);
	return {
		batchSize: interval > 0 && size >= 0 ? Math.max(1, size) : 0,
		batchInterval: interval > 0 ? interval : 0,
		transport: {
			timeout: stored.timeout ? Number(stored.timeout) : undefined,
			proxy: stored.proxy ? proxyOf(ctx, stored.proxy) : undefined,
			skipSslCertificateValidation:
				stored.allowUnauthorizedCerts === true || stored.allowUnauthorizedCerts === 'true',
		},
	};
}
