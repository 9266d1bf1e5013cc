import type { IDataObject, IExecuteFunctions, IGetNodeParameterOptions, INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/**
 * Resource locators reduced to their ID, also inside collections (n8n's `extractValue` only
 * unwraps a locator that is the parameter itself, not one nested in "Filters").
 */
export function unwrapLocators(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(unwrapLocators);
	if (typeof value !== 'object' || value === null) return value;
	const object = value as IDataObject;
	if (object.__rl === true) return object.value;
	return Object.fromEntries(
		Object.entries(object).map(([key, inner]) => [key, unwrapLocators(inner)]),
	);
}

/** One input item's view of the node's parameters: all a request builder reads. */
export interface ItemParameters {
	getNode(): INode;
	getItemIndex(): number;
	getNodeParameter(name: string, fallback?: unknown, options?: IGetNodeParameterOptions): unknown;
}

/** The parameters of input item `itemIndex`, with its expressions evaluated for that item. */
export function itemParameters(ctx: IExecuteFunctions, itemIndex: number): ItemParameters {
	return {
		getNode: () => ctx.getNode(),
		getItemIndex: () => itemIndex,
		getNodeParameter: (name, fallback, options) =>
			ctx.getNodeParameter(name, itemIndex, fallback, options),
	};
}

/** A parameter's value with resource locators reduced to their ID; `fallback` when not shown. */
export function param<T>(ctx: ItemParameters, name: string, fallback: T): T {
	return unwrapLocators(ctx.getNodeParameter(name, fallback, { extractValue: true })) as T;
}

/** Refuses bad input before any request, naming the field and what is wrong. */
export function invalid(ctx: ItemParameters, message: string, description?: string): never {
	throw new NodeOperationError(ctx.getNode(), message, {
		description,
		itemIndex: ctx.getItemIndex(),
	});
}

/**
 * An ID from a picker or text field: required, text or a number, trimmed, and not "." or ".." (the
 * caller encodes it as one path segment, but URL normalisation would still turn those into another
 * endpoint: DELETE /leads/. is DELETE /leads/).
 */
export function requiredId(ctx: ItemParameters, name: string, label: string): string {
	const raw = param<unknown>(ctx, name, '');
	const pick = `Pick a ${label.replace(/ ID$/, '').toLowerCase()} from the list or paste its ID.`;
	if (raw !== undefined && raw !== null && typeof raw !== 'string' && typeof raw !== 'number') {
		invalid(ctx, `${label} must be text or a number, not ${describe(raw)}`, pick);
	}
	const id = raw === undefined || raw === null ? '' : String(raw).trim();
	if (!id) invalid(ctx, `${label} is empty`, pick);
	if (id === '.' || id === '..') {
		invalid(
			ctx,
			`${label} "${id}" is not a valid ID`,
			`"." and ".." would address another endpoint. Check the expression that sets it. ${pick}`,
		);
	}
	return id;
}

/** A text parameter, trimmed: numbers become text, anything else (an object, a list) is refused by name. */
export function text(ctx: ItemParameters, name: string, label: string): string {
	const raw = param<unknown>(ctx, name, '');
	if (raw === undefined || raw === null) return '';
	if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') {
		invalid(ctx, `${label} must be text, not ${describe(raw)}`);
	}
	return String(raw).trim();
}

/** What a value is, in a user's words, for an error message. */
export function describe(value: unknown): string {
	if (Array.isArray(value)) return 'a list';
	if (value === null) return 'null';
	return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Keys that change an object's prototype or look up inherited members instead of data. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A user-given key that cannot be copied as plain data, or undefined (checked at any depth). */
export function prototypeKey(value: unknown): string | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	for (const [key, inner] of Object.entries(value)) {
		if (PROTOTYPE_KEYS.has(key)) return key;
		const found = prototypeKey(inner);
		if (found) return found;
	}
	return undefined;
}

export function isPrototypeKey(key: string): boolean {
	return PROTOTYPE_KEYS.has(key);
}

/** Copies the non-empty values into `target` under their wire names. */
export function assignFilled(target: IDataObject, values: IDataObject): IDataObject {
	for (const [key, value] of Object.entries(values)) {
		if (value === undefined || value === null) continue;
		if (typeof value === 'string' && value.trim() === '') continue;
		target[key] = typeof value === 'string' ? value.trim() : value;
	}
	return target;
}
