import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { host } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { PeaksSection } from './PeaksSection';

afterEach(() => vi.unstubAllGlobals());

describe('PeaksSection', () => {
  it('enters a peak the host cannot discover (memory) with its unit and source', async () => {
    const fetchMock = vi.fn(async (_req: Request) => jsonResponse(host));
    vi.stubGlobal('fetch', fetchMock);
    const user = userEvent.setup();
    renderWithProviders(<PeaksSection host={host} canEdit />);
    await user.selectOptions(screen.getByLabelText('Enter another peak'), 'memory_bw');
    const form = screen.getByRole('form', { name: 'Memory bandwidth peak of bench-a' });
    const value = within(form).getByLabelText('Memory bandwidth peak (MB/s)');
    expect(value).toHaveFocus();
    await user.click(within(form).getByRole('button', { name: 'Save peak' }));
    expect(value).toHaveAccessibleDescription('Enter the peak');
    await user.type(value, '-3');
    expect(value).toHaveAccessibleDescription('A positive number');
    await user.clear(value);
    await user.type(value, '307200');
    await user.type(within(form).getByLabelText('Source (optional)'), '8 × DDR5-4800');
    await user.click(within(form).getByRole('button', { name: 'Save peak' }));
    const req = fetchMock.mock.calls[0]?.[0] as Request;
    expect(req.method).toBe('PUT');
    expect(new URL(req.url).pathname).toBe('/api/hosts/1/peaks/memory_bw');
    expect(await req.json()).toEqual({ value: 307200, note: '8 × DDR5-4800' });
    expect(screen.queryByRole('form')).not.toBeInTheDocument();
  });

  it('goes back to the computed peak for one a person entered', async () => {
    const fetchMock = vi.fn(async (_req: Request) => jsonResponse(host));
    vi.stubGlobal('fetch', fetchMock);
    const entered = { ...host, peaks: { ...host.peaks, cpu_fp64: { value: 100, unit: 'GFLOP/s', formula: 'entered by a person: datasheet', source: 'user' as const } } };
    renderWithProviders(<PeaksSection host={entered} canEdit />);
    expect(screen.getByRole('region', { name: 'Theoretical peaks' })).toHaveTextContent('FP64 100 GFLOP/s = entered by a person: datasheet (user)');
    await userEvent.click(screen.getByRole('button', { name: 'Use the computed FP64 peak of bench-a' }));
    const req = fetchMock.mock.calls[0]?.[0] as Request;
    expect(req.method).toBe('DELETE');
    expect(new URL(req.url).pathname).toBe('/api/hosts/1/peaks/cpu_fp64');
  });
});
