import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { host, operator, viewer } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import type { Schedule } from '../api/schedules';
import { SchedulesPage } from './SchedulesPage';

const mine: Schedule = {
  id: 7, title: 'nightly', suite: 'quick', suite_title: 'Quick health check', host_ids: [1], label: null, interval_s: 7200,
  cron: null, enabled: true, created_by: 'otto', created_at: '2026-11-27T00:00:00Z', updated_at: '2026-11-27T00:00:00Z',
  next_fire_at: '2026-11-27T02:00:00Z', next: ['2026-11-27T02:00:00Z', '2026-11-27T04:00:00Z', '2026-11-27T06:00:00Z'],
  last_firing: { id: 1, schedule_id: 7, fired_at: '2026-11-26T22:00:00Z', due_at: '2026-11-26T22:00:00Z', trigger: 'beat',
    outcome: 'skipped', reason: 'no host free: bench-a: busy (a run queued or running)', suite_run_id: null, host_ids: [],
    skipped: [{ host_id: 1, name: 'bench-a', reason: 'busy (a run queued or running)' }] },
};
const theirs: Schedule = { ...mine, id: 8, title: 'weekly', created_by: 'someone', host_ids: null, label: 'region=eu', interval_s: null, cron: '0 3 * * mon', last_firing: null };

function setup(me = operator) {
  const fetchMock = vi.fn(async (req: Request) => {
    const path = new URL(req.url).pathname;
    if (path === '/api/schedules' && req.method === 'GET') return jsonResponse({ data: [mine, theirs] });
    if (path === '/api/hosts') return jsonResponse({ data: [host] });
    if (path === '/api/suites') return jsonResponse({ data: [{ id: 'quick', title: 'Quick health check', description: '', items: [], builtin: true, created_by: null, expected_duration_one_host_s: 100 }] });
    if (path === '/api/schedules/preview') return jsonResponse({ next: ['2026-11-27T02:00:00Z', '2026-11-27T04:00:00Z', '2026-11-27T06:00:00Z'] });
    if (path === '/api/schedules/7' && req.method === 'PUT') return jsonResponse({ ...mine, ...((await req.clone().json()) as object) });
    return jsonResponse({ detail: 'not here' }, 404);
  });
  vi.stubGlobal('fetch', fetchMock);
  renderWithProviders(<SchedulesPage />, { me });
  return { fetchMock, user: userEvent.setup() };
}

afterEach(() => vi.unstubAllGlobals());

describe('SchedulesPage', () => {
  it('lists schedules in words; its owner may edit, toggle and delete it, not another operator’s', async () => {
    setup();
    const table = await screen.findByRole('table', { name: 'Schedules' });
    const [, nightly, weekly] = within(table).getAllByRole('row');
    expect(nightly).toHaveTextContent('every 2 hours');
    expect(nightly).toHaveTextContent('bench-a');
    expect(nightly).toHaveTextContent('skipped');
    expect(weekly).toHaveTextContent('every Monday at 03:00 UTC');
    expect(weekly).toHaveTextContent('hosts labelled region=eu');
    expect(within(nightly!).getByRole('button', { name: 'Edit' })).toBeInTheDocument();
    expect(within(nightly!).getByRole('checkbox', { name: 'nightly enabled' })).toBeChecked();
    expect(within(weekly!).queryByRole('button', { name: 'Edit' })).not.toBeInTheDocument();
    expect(within(weekly!).queryByRole('button', { name: 'Delete' })).not.toBeInTheDocument();
    expect(within(weekly!).getByRole('button', { name: 'Run now' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Create schedule' })).toBeInTheDocument();
  });

  it('edits a schedule from its own values and PUTs the whole body', async () => {
    const { user, fetchMock } = setup();
    const table = await screen.findByRole('table', { name: 'Schedules' });
    await user.click(within(within(table).getAllByRole('row')[1]!).getByRole('button', { name: 'Edit' }));
    const form = await screen.findByRole('form', { name: 'Edit nightly' });
    expect(within(form).getByLabelText('Title')).toHaveValue('nightly');
    expect(within(form).getByLabelText('Every')).toHaveValue('2');
    expect(within(form).getByLabelText('Unit')).toHaveValue('hours');
    expect(await within(form).findByRole('list', { name: 'Next fire times' })).toBeInTheDocument();
    await user.clear(within(form).getByLabelText('Every'));
    await user.type(within(form).getByLabelText('Every'), '30');
    await user.selectOptions(within(form).getByLabelText('Unit'), 'minutes');
    await user.click(within(form).getByRole('button', { name: 'Save changes' }));
    const put = fetchMock.mock.calls.map((c) => c[0] as Request).find((r) => r.method === 'PUT');
    expect(put && new URL(put.url).pathname).toBe('/api/schedules/7');
    expect(await put!.json()).toEqual({ title: 'nightly', suite: 'quick', enabled: true, host_ids: [1], interval_s: 1800 });
    expect(await screen.findByText(/^Saved “nightly”: next/)).toHaveAttribute('role', 'status');
  });

  it('a viewer gets the list and the histories, no Create, Edit, Run now or toggle', async () => {
    setup(viewer);
    const table = await screen.findByRole('table', { name: 'Schedules' });
    expect(within(table).getAllByRole('button', { name: 'History' })).toHaveLength(2);
    expect(screen.queryByRole('button', { name: 'Create schedule' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Edit' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Run now' })).not.toBeInTheDocument();
    expect(screen.queryByRole('checkbox')).not.toBeInTheDocument();
  });
});
