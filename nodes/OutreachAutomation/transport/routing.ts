import type {
	DeclarativeRestApiSettings,
	IDataObject,
	IExecutePaginationFunctions,
	IHttpRequestMethods,
	INodeExecutionData,
} from 'n8n-workflow';

import { fetchList } from './paginate';
import type { ApiRequest } from './request';
import { apiRequest } from './request';

/** What the routed operation is about, for error messages: resource label and id parameter. */
const TARGETS: Record<string, { label: string; idParameter: string }> = {
	lead: { label: 'Lead', idParameter: 'leadId' },
	campaign: { label: 'Campaign', idParameter: 'campaignId' },
	message: { label: 'Message', idParameter: 'messageId' },
};

function optionalParameter(ctx: IExecutePaginationFunctions, name: string): unknown {
	try {
		return ctx.getNodeParameter(name, undefined, { extractValue: true });
	} catch {
		return undefined; // not shown for this operation
	}
}

function toItems(data: unknown): INodeExecutionData[] {
	if (Array.isArray(data)) return data.map((json) => ({ json: json as IDataObject }));
	return [{ json: (data ?? {}) as IDataObject }];
}

/**
 * Entry point of every declarative operation: RoutingNode hands each item's prepared request here
 * (`requestOperations.pagination` + `send.paginate` on every operation), and it goes through the
 * one pipeline in ./request instead of RoutingNode's own unpaced, unretried call.
 */
export async function routeRequest(
	this: IExecutePaginationFunctions,
	requestData: DeclarativeRestApiSettings.ResultOptions,
): Promise<INodeExecutionData[]> {
	const { options } = requestData;
	const resource = this.getNodeParameter('resource') as string;
	const operation = this.getNodeParameter('operation') as string;
	const target = TARGETS[resource];
	const id = target ? optionalParameter(this, target.idParameter) : undefined;
	const method = (options.method ?? 'GET') as IHttpRequestMethods;
	const body = options.body as IDataObject | undefined;

	const request: ApiRequest = {
		method,
		path: options.url ?? '/',
		qs: options.qs as IDataObject | undefined,
		body: method === 'GET' || method === 'DELETE' ? undefined : body,
		resource: target?.label,
		id: typeof id === 'string' && id !== '' ? id : undefined,
		itemIndex: this.getItemIndex(),
		transport: {
			timeout: options.timeout,
			proxy: options.proxy,
			skipSslCertificateValidation: options.skipSslCertificateValidation === true || options.skipSslCertificateValidation === 'true',
		},
	};

	if (operation === 'getAll') {
		const returnAll = this.getNodeParameter('returnAll', false) as boolean;
		const limit = returnAll ? undefined : (this.getNodeParameter('limit', 50) as number);
		const items = await fetchList(this, request, limit);
		return items.map((json) => ({ json }));
	}

	const { data } = await apiRequest(this, request);
	if (method === 'DELETE' && (data === undefined || data === null || (typeof data === 'object' && !Object.keys(data).length))) {
		// Some servers answer a delete with no data: still confirm what was deleted.
		return [{ json: { id: request.id ?? null, deleted: true } }];
	}
	return toItems(data);
}
