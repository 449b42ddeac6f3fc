import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../lib/api/errors';
import { cpuExperiment, memoryExperiment, networkPairExperiment } from '../../../test/fixtures';
import {
  draftFromSuite,
  itemFields,
  itemState,
  mapSuiteErrors,
  newItem,
  parseImport,
  refusalText,
  suiteBody,
  suiteTotal,
  withValue,
  type DraftItem,
} from './editor';

// The fixtures publish op as GET /api/experiments does: a fan-out parameter, one op or a list of them (one run per op).
const cpu = cpuExperiment;
const memory = memoryExperiment;
const experiments = [cpu, memory, networkPairExperiment];

const set = (item: DraftItem, values: Record<string, string>) => Object.entries(values).reduce((it, [k, v]) => withValue(it, k, v), item);

describe('an item', () => {
  it('offers the fan-out parameter as a list to pick from, the others as the New job form does', () => {
    const kinds = Object.fromEntries(itemFields(cpu).map((f) => [f.name, f.kind]));
    expect(kinds).toEqual({ op: 'enum-list', threads: 'integer-list', repeats: 'integer', duration_s: 'number', warmup_s: 'number' });
  });

  it('sends nothing but what was changed from the defaults, and estimates with the defaults for the rest', () => {
    const fresh = itemState(newItem(cpu), experiments);
    expect(fresh.params).toEqual({});
    expect(fresh.errors).toEqual({});
    // threads [1, 2, 4, 8] × (1 s warm-up + 3 × 5 s)
    expect(fresh.seconds).toBe(64);

    const short = itemState(set(newItem(cpu), { op: 'fp64, int32', threads: '1', repeats: '1', duration_s: '1', warmup_s: '0' }), experiments);
    expect(short.params).toEqual({ op: ['fp64', 'int32'], threads: [1], repeats: 1, duration_s: 1, warmup_s: 0 });
    // two runs (one per op), each 1 × (0 + 1 × 1 s)
    expect(short.seconds).toBe(2);
  });

  it('sends one op picked as one op', () => {
    expect(itemState(set(newItem(cpu), { op: 'int32' }), experiments).params).toEqual({ op: 'int32' });
  });

  it('refuses a value out of the schema bounds in place, with no estimate, and the suite is not saved', () => {
    const item = set(newItem(cpu), { threads: '0' });
    const s = itemState(item, experiments);
    expect(s.errors.threads).toMatch(/out of range: allowed 1 – 256/);
    expect(s.seconds).toBeUndefined();
    expect(suiteBody({ title: 'Mine', description: '', items: [item] }, experiments)).toEqual({ error: expect.stringMatching(/^Item 1 has errors: threads: /) });
  });

  it('shows a field that applies to any of the runs of a fan-out list (sizes for the latency run)', () => {
    const names = (op: string) => itemState(set(newItem(memory), { op }), experiments).fields.map((f) => f.name);
    expect(names('copy')).toContain('blocks');
    expect(names('copy')).not.toContain('sizes');
    expect(names('copy, latency')).toEqual(expect.arrayContaining(['blocks', 'sizes']));
    expect(names('latency')).not.toContain('blocks');
  });
});

describe('a suite', () => {
  const quickCpu = { experiment: 'cpu', params: { op: ['fp64', 'int32'], threads: [1, 2], repeats: 1, duration_s: 5, warmup_s: 1 }, needs: null };

  it('loads a suite and gives back the same items, defaults it set included (save as new, edit)', () => {
    const draft = draftFromSuite({ title: 'Quick', description: 'Short', items: [quickCpu, { experiment: 'cpu', params: {}, needs: 'gpu' }] }, experiments, ' (copy)');
    expect(draft.title).toBe('Quick (copy)');
    expect(suiteBody(draft, experiments)).toEqual({
      body: { title: 'Quick (copy)', description: 'Short', items: [quickCpu, { experiment: 'cpu', params: {}, needs: 'gpu' }] },
    });
  });

  it("keeps a loaded item's ops in the order they run in; ops picked since come after", () => {
    const draft = draftFromSuite({ title: 'Order', description: '', items: [{ experiment: 'cpu', params: { op: ['int32', 'fp64'] } }] }, experiments);
    expect(itemState(draft.items[0] as DraftItem, experiments).params).toEqual({ op: ['int32', 'fp64'] });
    // The checkboxes write the picked ops in the options' order.
    const more = withValue(draft.items[0] as DraftItem, 'op', 'fp64, fp32, int32');
    expect(itemState(more, experiments).params).toEqual({ op: ['int32', 'fp64', 'fp32'] });
  });

  it('says an experiment the API does not have, and does not save it', () => {
    const draft = draftFromSuite({ title: 'Old', description: '', items: [{ experiment: 'fft', params: { n: 1 } }] }, experiments);
    const item = draft.items[0] as DraftItem;
    expect(itemState(item, experiments).problem).toBe('The API has no experiment "fft"');
    expect(suiteBody(draft, experiments)).toEqual({ error: 'Item 1 has errors: The API has no experiment "fft"' });
  });

  it('needs a title and an item', () => {
    expect(suiteBody({ title: '  ', description: '', items: [newItem(cpu)] }, experiments)).toEqual({ error: 'Give the suite a title' });
    expect(suiteBody({ title: 'Empty', description: '', items: [] }, experiments)).toEqual({ error: 'Add at least one item' });
  });

  it('totals on one host as the API does: two-host and GPU items are left out of the figure and counted apart', () => {
    const items = [newItem(cpu), { ...newItem(cpu), needs: 'gpu' as const }, newItem(networkPairExperiment), set(newItem(cpu), { threads: '1' })];
    const states = items.map((it) => itemState(it, experiments));
    expect(states.map((s) => s.twoHost)).toEqual([false, false, true, false]);
    // 64 s with the defaults; 16 s at one thread
    expect(suiteTotal(states, items)).toEqual({ oneHost: 80, leftOut: 2 });
    const bad = [set(newItem(cpu), { repeats: 'x' })];
    expect(suiteTotal(bad.map((it) => itemState(it, experiments)), bad).oneHost).toBeUndefined();
  });
});

describe("the server's refusal", () => {
  it('puts an item checked as a job body next to the item and field it names', () => {
    const e = mapSuiteErrors(ApiError.fromBody(422, { detail: 'items[1] (cpu): params.threads.0: Input should be less than or equal to 256' }));
    expect(e.items).toEqual({ 1: { fields: { threads: 'Input should be less than or equal to 256' }, messages: [] } });
    expect(refusalText(e)).toBe('item 2: threads: Input should be less than or equal to 256');
  });

  it('says an item over the job duration limit, and an unknown experiment, on the item', () => {
    const long = mapSuiteErrors(ApiError.fromBody(422, { detail: 'items[0] (disk) would take 9000 s; a job may take at most 3600 s' }));
    expect(long.items[0]?.messages).toEqual(['It would take 9000 s; a job may take at most 3600 s']);
    const unknown = mapSuiteErrors(ApiError.fromBody(422, { detail: "items[2].experiment: unknown experiment 'fft'; the experiments are cpu" }));
    expect(unknown.items[2]?.messages).toEqual(["experiment: unknown experiment 'fft'; the experiments are cpu"]);
  });

  it('maps request validation by loc: an item field, an item, the title, the rest for the form', () => {
    const e = mapSuiteErrors(
      ApiError.fromBody(422, {
        detail: [
          { loc: ['body', 'items', 0, 'params', 'repeats'], msg: 'too many' },
          { loc: ['body', 'items', 0, 'extra'], msg: 'Extra inputs are not permitted' },
          { loc: ['body', 'title'], msg: 'String should have at least 1 character' },
          { loc: ['body'], msg: 'Field required' },
        ],
      }),
    );
    expect(e.items[0]).toEqual({ fields: { repeats: 'too many' }, messages: ['extra: Extra inputs are not permitted'] });
    expect(e.title).toBe('String should have at least 1 character');
    expect(e.form).toEqual(['Field required']);
  });

  it('says any other refusal in words (a 403 names the role)', () => {
    const e = mapSuiteErrors(ApiError.fromBody(403, { detail: "suite 'saved-3' is otto's: only its owner or an admin may change it" }));
    expect(e.form[0]).toMatch(/cannot do this: suite 'saved-3' is otto's/);
  });
});

describe('an import file', () => {
  it('is POSTed as read when it is a JSON object; anything else is refused in words here', () => {
    expect(parseImport('{"title": "T", "items": []}')).toEqual({ body: { title: 'T', items: [] } });
    expect(parseImport('title: T')).toEqual({ error: expect.stringMatching(/^The file is not JSON \(/) });
    expect(parseImport('[1, 2]')).toEqual({ error: expect.stringMatching(/^The file holds no suite/) });
  });
});
