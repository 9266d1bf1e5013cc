/**
 * How far back a trigger that lost its starting point looks: from the node's Poll Times, the longest
 * time between two polls, at most.
 */
import type { IDataObject } from 'n8n-workflow';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Poll Times modes with a fixed longest gap (n8n fixes their second, minute or hour). */
const FIXED: Record<string, number> = {
	everyMinute: MINUTE,
	everyHour: HOUR,
	everyDay: DAY,
	everyWeek: 7 * DAY,
	everyMonth: 31 * DAY,
};

/** What to assume when Poll Times cannot be read. */
const UNKNOWN = DAY;

const restricted = (field: string | undefined) =>
	field !== undefined && field !== '*' && field !== '?';

/** The step of a field written `*` + `/n`, else undefined. */
function step(field: string): number | undefined {
	const match = /^\*\/(\d+)$/.exec(field);
	return match ? Number(match[1]) : undefined;
}

/**
 * An upper bound of the longest gap between two times a cron expression names (5 fields, or 6 with
 * seconds first): set by its coarsest field that is not every value. Too long only widens the look
 * back; never too short.
 */
export function cronGapMs(expression: string): number {
	const fields = expression.trim().split(/\s+/);
	if (fields.length === 5) fields.unshift('0');
	if (fields.length !== 6) return UNKNOWN;
	const [, minute, hour, dayOfMonth, month, weekday] = fields;
	if (restricted(month)) return 366 * DAY;
	if (restricted(dayOfMonth)) return 31 * DAY;
	if (restricted(weekday)) return 7 * DAY;
	if (restricted(hour)) return (step(hour) ?? 24) * HOUR;
	if (restricted(minute)) return (step(minute) ?? 60) * MINUTE;
	return MINUTE;
}

/** The longest gap between two polls the Poll Times allow (all entries together). */
export function longestGapMs(pollTimes: unknown): number {
	const items = (pollTimes as IDataObject | undefined)?.item;
	if (!Array.isArray(items) || items.length === 0) return UNKNOWN;
	const gaps = (items as IDataObject[]).map((item) => {
		const mode = String(item.mode);
		if (FIXED[mode] !== undefined) return FIXED[mode];
		if (mode === 'everyX' && Number(item.value) >= 1)
			return Number(item.value) * (item.unit === 'hours' ? HOUR : MINUTE);
		if (mode === 'custom' && typeof item.cronExpression === 'string')
			return cronGapMs(item.cronExpression);
		return UNKNOWN;
	});
	return Math.min(...gaps);
}
