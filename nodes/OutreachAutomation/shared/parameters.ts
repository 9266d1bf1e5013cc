import type { IDataObject, IExecuteSingleFunctions } from 'n8n-workflow';
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

/** A parameter's value with resource locators reduced to their ID; `fallback` when not shown. */
export function param<T>(ctx: IExecuteSingleFunctions, name: string, fallback: T): T {
	return unwrapLocators(ctx.getNodeParameter(name, fallback, { extractValue: true })) as T;
}

/** Refuses bad input before any request, naming the field and what is wrong. */
export function invalid(
	ctx: IExecuteSingleFunctions,
	message: string,
	description?: string,
): never {
	throw new NodeOperationError(ctx.getNode(), message, {
		description,
		itemIndex: ctx.getItemIndex(),
	});
}

/** An ID from a picker or text field: required and trimmed (the caller encodes it for the path). */
export function requiredId(ctx: IExecuteSingleFunctions, name: string, label: string): string {
	const raw = param<unknown>(ctx, name, '');
	const id = typeof raw === 'string' || typeof raw === 'number' ? String(raw).trim() : '';
	if (!id) {
		invalid(
			ctx,
			`${label} is empty`,
			`Pick a ${label.replace(/ ID$/, '').toLowerCase()} from the list or paste its ID.`,
		);
	}
	return id;
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
