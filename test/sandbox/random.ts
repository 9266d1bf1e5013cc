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
		const entries = Object.entries(weights) as [K, number][];
		let roll = this.next() * entries.reduce((sum, [, w]) => sum + w, 0);
		for (const [key, weight] of entries) {
			roll -= weight;
			if (roll < 0) return key;
		}
		return entries[entries.length - 1][0];
	}
}
