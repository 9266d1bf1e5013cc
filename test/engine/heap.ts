/**
 * The heap a run keeps: its largest growth over the start, read after full garbage collections every
 * `everyMs` (garbage not yet collected does not count). Needs `gc` (node --expose-gc, or heapGc()).
 */
import v8 from 'node:v8';
import vm from 'node:vm';

/** The garbage collector, exposed at run time where the process was not started with --expose-gc. */
export function heapGc(): () => void {
	const exposed = (global as { gc?: () => void }).gc;
	if (exposed) return exposed;
	v8.setFlagsFromString('--expose-gc');
	return vm.runInNewContext('gc') as () => void;
}

export function heapWatch(everyMs = 1000): { stop(): number } {
	const gc = heapGc();
	gc();
	const before = process.memoryUsage().heapUsed;
	let largest = before;
	const read = () => {
		gc();
		largest = Math.max(largest, process.memoryUsage().heapUsed);
	};
	const timer = setInterval(read, everyMs);
	return {
		stop(): number {
			clearInterval(timer);
			read();
			return largest - before;
		},
	};
}
