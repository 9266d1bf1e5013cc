/** Entries and total per weights object: large seeds draw hundreds of thousands of times from the same few. */
const WEIGHT_TABLES = new WeakMap<object, { entries: [string, number][]; total: number }>();

/** A small seeded PRNG (mulberry32): seed data and random faults must repeat exactly for a given seed. */
export class Random {
	private state: number;

	constructor(seed: number) {
		this.state = seed >>> 0;
	}

	/** A float in [0, 1). */
	next(): number {
		this.state = (this.state + 0x6d2b79f5) >>> 0;
		let t = this.state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	}

	/** An integer in [min, max]. */
	int(min: number, max: number): number {
		return min + Math.floor(this.next() * (max - min + 1));
	}

	pick<T>(items: readonly T[]): T {
		return items[Math.floor(this.next() * items.length)];
	}

	chance(probability: number): boolean {
		return this.next() < probability;
	}

	/** Picks a key of `weights` with probability proportional to its weight. */
	weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
		let table = WEIGHT_TABLES.get(weights);
		if (!table) {
			const entries = Object.entries(weights) as [string, number][];
			table = { entries, total: entries.reduce((sum, [, w]) => sum + w, 0) };
			WEIGHT_TABLES.set(weights, table);
		}
		let roll = this.next() * table.total;
		for (const [key, weight] of table.entries) {
			roll -= weight;
			if (roll < 0) return key as K;
		}
		return table.entries[table.entries.length - 1][0] as K;
	}
}
