import type {
	DeclarativeRestApiSettings,
	IDataObject,
	IExecutePaginationFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	INodeExecutionData,
} from 'n8n-workflow';

import { campaignBuilders } from '../resources/campaign';
import { leadBuilders } from '../resources/lead';
import { messageBuilders } from '../resources/message';
import type { RequestBuilders } from '../shared/fields';
import { readList } from '../transport/pages';
import type { ApiRequest } from '../transport/request';
import { apiRequest } from '../transport/request';

/** Per resource: its label for messages ("Lead ld_1 was not found") and its operations' builders. */
const RESOURCES: Record<string, { label: string; builders: RequestBuilders }> = {
	lead: { label: 'Lead', builders: leadBuilders },
	campaign: { label: 'Campaign', builders: campaignBuilders },
	message: { label: 'Message', builders: messageBuilders },
};

function toItems(data: unknown): INodeExecutionData[] {
	if (Array.isArray(data)) return data.map((json) => ({ json: json as IDataObject }));
	return [{ json: (data ?? {}) as IDataObject }];
}

/** The id in a path such as /leads/<id> or /campaigns/<id>/start, decoded; none for /leads. */
function idInPath(path: string): string | undefined {
	const segment = path.split('/')[2];
	return segment ? decodeURIComponent(segment) : undefined;
}

/**
 * Entry point of every declarative operation: RoutingNode hands each item's prepared request here
 * (`requestOperations.pagination` + `send.paginate` on every operation), and it goes through the
 * one pipeline in ./request instead of RoutingNode's own unpaced, unretried call. The operation's
 * builders complete the request when its turn comes (see RequestBuilder).
 */
export async function routeRequest(
	this: IExecutePaginationFunctions,
	requestData: DeclarativeRestApiSettings.ResultOptions,
): Promise<INodeExecutionData[]> {
	const resource = this.getNodeParameter('resource') as string;
	const operation = this.getNodeParameter('operation') as string;
	const { label, builders } = RESOURCES[resource];
	const method = (requestData.options.method ?? 'GET') as IHttpRequestMethods;

	let id: string | undefined;
	const prepare = async () => {
		// The same object RoutingNode would hand a preSend function.
		let options = { ...requestData.options, url: requestData.options.url ?? '/' } as IHttpRequestOptions;
		for (const build of builders[operation] ?? []) options = await build.call(this, options);
		const path = options.url;
		id = idInPath(path);
		return {
			path,
			qs: options.qs as IDataObject | undefined,
			body: method === 'GET' || method === 'DELETE' ? undefined : (options.body as IDataObject | undefined),
			id,
		};
	};
	const request: ApiRequest = {
		method,
		path: requestData.options.url ?? '/',
		resource: label,
		itemIndex: this.getItemIndex(),
		transport: {
			timeout: requestData.options.timeout,
			proxy: requestData.options.proxy,
			skipSslCertificateValidation:
				requestData.options.skipSslCertificateValidation === true ||
				requestData.options.skipSslCertificateValidation === 'true',
		},
	};

	if (operation === 'getAll') {
		const returnAll = this.getNodeParameter('returnAll', false) as boolean;
		const limit = returnAll ? undefined : (this.getNodeParameter('limit', 50) as number);
		const items = await readList(this, { ...request, ...(await prepare()) }, limit);
		return items.map((json) => ({ json }));
	}

	const { data } = await apiRequest(this, { ...request, prepare });
	if (method === 'DELETE' && (data === undefined || data === null || (typeof data === 'object' && !Object.keys(data).length))) {
		// Some servers answer a delete with no data: still confirm what was deleted.
		return [{ json: { id: id ?? null, deleted: true } }];
	}
	return toItems(data);
}
