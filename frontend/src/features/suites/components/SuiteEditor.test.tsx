import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cpuExperiment, memoryExperiment } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { draftFromSuite, newItem } from '../lib/editor';
import { SuiteEditor } from './SuiteEditor';

const experiments = [cpuExperiment, memoryExperiment];

function setup(respond: (req: Request) => Promise<Response>, suiteId?: string) {
  const fetchMock = vi.fn(respond);
  vi.stubGlobal('fetch', fetchMock);
  const onSaved = vi.fn();
  const initial = suiteId
    ? draftFromSuite({ title: 'Mine', description: '', items: [{ experiment: 'cpu', params: { threads: [1], repeats: 1 } }] }, experiments)
    : { title: '', description: '', items: [newItem(cpuExperiment)] };
  renderWithProviders(<SuiteEditor experiments={experiments} initial={initial} suiteId={suiteId} onSaved={onSaved} onCancel={() => {}} />);
  return { fetchMock, onSaved, user: userEvent.setup() };
}

afterEach(() => vi.unstubAllGlobals());

describe('SuiteEditor', () => {
  it('edits items with the generated fields, totals them, and saves the body the API takes', async () => {
    const { user, fetchMock, onSaved } = setup(async () => jsonResponse({ id: 'saved-1', title: 'Two', description: '', items: [], builtin: false, created_by: 'otto', expected_duration_one_host_s: 17 }, 201));
    await user.type(screen.getByLabelText('Title'), 'Two');
    const first = screen.getByRole('group', { name: 'Item 1: CPU throughput' });
    await user.clear(within(first).getByLabelText('Threads'));
    await user.type(within(first).getByLabelText('Threads'), '1');
    // 1 thread × (1 s warm-up + 3 × 5 s)
    expect(first).toHaveTextContent('Expected duration of this item: ≈ 16 s on each host');

    await user.selectOptions(screen.getByLabelText('Experiment of a new item'), 'memory');
    await user.click(screen.getByRole('button', { name: 'Add item' }));
    const second = screen.getByRole('group', { name: 'Item 2: Memory' });
    expect(within(second).getByLabelText('Block sizes')).toBeInTheDocument();
    const ops = within(second).getByRole('group', { name: 'Operations' });
    await user.click(within(ops).getByRole('checkbox', { name: 'Load latency' }));
    await user.click(within(ops).getByRole('checkbox', { name: 'Copy (read + write)' }));
    // Working-set sizes apply to the latency op only; block sizes do not.
    expect(within(second).queryByLabelText('Block sizes')).not.toBeInTheDocument();
    await user.clear(within(second).getByLabelText('Working-set sizes'));
    await user.type(within(second).getByLabelText('Working-set sizes'), '4 KiB');
    await user.clear(within(second).getByLabelText('Threads'));
    await user.type(within(second).getByLabelText('Threads'), '1');
    // 1 size × 1 thread × (1 s + 3 × 3 s)
    expect(second).toHaveTextContent('≈ 10 s on each host');
    expect(screen.getByText(/^Expected duration of the suite on one host/)).toHaveTextContent('≈ 26 s');

    await user.click(screen.getByRole('button', { name: 'Save suite' }));
    const req = fetchMock.mock.calls[0]?.[0] as Request;
    expect(req.method).toBe('POST');
    expect(new URL(req.url).pathname).toBe('/api/suites');
    expect(await req.json()).toEqual({
      title: 'Two',
      description: '',
      items: [
        { experiment: 'cpu', params: { threads: [1] }, needs: null },
        { experiment: 'memory', params: { op: 'latency', sizes: [4096], threads: [1] }, needs: null },
      ],
    });
    expect(onSaved).toHaveBeenCalledWith(expect.objectContaining({ id: 'saved-1' }));
  });

  it("shows the server's refusal next to the item and field it names, and PUTs a saved suite", async () => {
    const { user, fetchMock, onSaved } = setup(async () => jsonResponse({ detail: 'items[0] (cpu): params.threads.0: Input should be less than or equal to 8' }, 422), 'saved-7');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    const req = fetchMock.mock.calls[0]?.[0] as Request;
    expect(req.method).toBe('PUT');
    expect(new URL(req.url).pathname).toBe('/api/suites/saved-7');
    // What the item was loaded with is sent back as it was.
    expect(((await req.json()) as { items: unknown[] }).items).toEqual([{ experiment: 'cpu', params: { threads: [1], repeats: 1 }, needs: null }]);
    const item = screen.getByRole('group', { name: 'Item 1: CPU throughput' });
    expect(await within(item).findByText('Input should be less than or equal to 8')).toBeInTheDocument();
    expect(within(item).getByLabelText('Threads')).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getByRole('alert')).toHaveTextContent('The server refused the suite: item 1: threads: Input should be less than or equal to 8');
    expect(onSaved).not.toHaveBeenCalled();
  });

  it('does not send a suite without a title, and says so', async () => {
    const { user, fetchMock } = setup(async () => jsonResponse({}, 201));
    await user.click(screen.getByRole('button', { name: 'Save suite' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Not saved: Give the suite a title');
    expect(fetchMock).not.toHaveBeenCalled();
  });
});
