/**
 * The scenarios of `npm run bench`, in the order they run. Adding one: a file exporting a `Scenario` (its
 * key for --only, what it runs, and its own targets if the usual ones do not fit) and one line below.
 *
 * Scenarios (full / --quick):
 *   1   Lead > Get Many, Return All over 10,000 / 2,000 leads (per_page 100)
 *   1b  the same with a tenth of the window already spent by another client on the same key
 *   2   Lead > Create, 500 / 100 input items in one execution
 *   3   Lead > Get, 500 / 100 input items in one execution
 *   4a  Trigger: idle polls (n8n's own scheduled polls of the published workflow)
 *   4b  Trigger: a poll with a 1,000 / 200 message backlog
 *   5a  Scenario 1 with HTTP Request (page-number pagination, complete on a short page) + Split Out of `data`
 *   5b  ... with Retry On Fail
 *   5c  ... with the pagination interval set to the limit (window / limit ms between pages)
 *   5d  ... with a tenth of the window already spent (as 1b)
 *   5e  ... as 5d, with Retry On Fail and a completion expression that turns a 429 into an error
 *   6   headerless: Lead > Create, 300 / 100 concurrent items, a server sending no rate-limit headers
 *   7a/b coarse: Lead > Create, 500 / 100 items, X-RateLimit-Reset in epoch seconds / as an HTTP date
 *   8   bigPages: Lead > Get Many, Return All over 10,000 / 2,000 leads from a server allowing 1,000 per page
 *   (variants.ts holds their server settings and sizes)
 *   9   drain: Trigger, a 20,000 / 4,000 message backlog drained over several polls (test/bench/drain.ts)
 *   10  processes: Lead > Create shared by 1, 2 and 4 separate processes on one key (test/bench/processes.ts)
 *   11  upsert: Lead > Create or Update, 500 / 100 items against 10,000 / 2,000 leads, then again (upsert.ts)
 *   11v ... and 5,000 / 1,000 items against 20,000 / 4,000 leads in one execution in n8n's engine (upsert-volume.ts)
 *   12  volume: Lead > Create, 10,000 and 100,000 / 2,000 and 10,000 items in one execution (test/bench/volume.ts)
 */
import { drain } from './drain';
import type { Scenario } from './figures';
import { coarse, create, get, headerless } from './items';
import { bigPages, getAll, http } from './lists';
import { processes } from './processes';
import { trigger } from './trigger';
import { volume } from './volume';
import { upsert } from './upsert';

export const SCENARIOS: Scenario[] = [
	bigPages, // before getAll: the node remembers the page size a server served
	getAll,
	http,
	create,
	get,
	upsert,
	trigger,
	coarse,
	headerless, // after the other action scenarios: the node keeps the pace it learnt here
	processes, // its own sandbox and processes: n8n is not involved
	volume, // its own sandbox and engine processes
	drain, // last of all: it restarts n8n with the durable scheduler
];
