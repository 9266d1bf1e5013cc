import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

import {
	AUTHORIZATION_HEADER,
	BASE_URL_NOTICES,
	CREDENTIAL_TEST_BASE_URL,
} from '../nodes/OutreachAutomation/transport/baseUrl';

/** The Base URL notices as dialog properties: each shows while the Base URL has its problem. */
const baseUrlNotices: INodeProperties[] = BASE_URL_NOTICES.map((notice) => ({
	displayName: notice.text,
	name: notice.name,
	type: 'notice',
	default: '',
	displayOptions: {
		show: { baseUrl: [{ _cnd: { regex: notice.when } }] },
		// An expression is only known when the workflow runs.
		hide: {
			baseUrl: [
				{ _cnd: { startsWith: '=' } },
				...(notice.unless ?? []).map((regex) => ({ _cnd: { regex } })),
			],
		},
	},
}));

export class OutreachAutomationApi implements ICredentialType {
	name = 'outreachAutomationApi';

	displayName = 'Outreach Automation API';

	documentationUrl =
		'https://github.com/outreach-automation/n8n-nodes-outreach-automation#the-credential';

	icon: Icon = {
		light: 'file:../nodes/OutreachAutomation/outreachAutomation.svg',
		dark: 'file:../nodes/OutreachAutomation/outreachAutomation.dark.svg',
	};

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://api.your-outreach-service.com',
			description:
				"The service's host root, without /api/v1 (the nodes add it), e.g. https://api.example.com. No user name or password, query or #fragment. For the local sandbox: http://127.0.0.1:4010.",
		},
		...baseUrlNotices,
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'Sent as "Authorization: Bearer &lt;key&gt;" on every request. Spaces and line breaks around it are removed; a key with spaces or invisible characters inside is refused.',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: AUTHORIZATION_HEADER,
			},
		},
	};

	// A one-item lead list: cheap, authenticated, and answers 401 or `success: false` for a wrong key.
	// A Base URL the nodes refuse (not http(s), userinfo, query, fragment) fails here as an invalid URL,
	// without any request; the nodes refuse it by name.
	test: ICredentialTestRequest = {
		request: {
			// The nodes' own Base URL rules, so a URL the nodes accept also passes here.
			baseURL: CREDENTIAL_TEST_BASE_URL,
			url: '/leads',
			qs: { per_page: 1 },
			method: 'GET',
		},
		// n8n checks `responseCode` rules on a failed answer and `responseSuccessBody` on a 2xx one, from
		// one list; the typings only allow one kind per list, hence the cast.
		rules: [
			{
				type: 'responseCode',
				properties: {
					value: 401,
					message:
						'The API key was refused (HTTP 401). Check that it is complete and still valid, with no spaces or line breaks inside.',
				},
			},
			{
				type: 'responseSuccessBody',
				properties: {
					key: 'success',
					value: false,
					message: 'The service refused the request: check the API key and the Base URL.',
				},
			},
		] as unknown as ICredentialTestRequest['rules'],
	};
}
