import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { readFilters } from '../lib/filters';
import { HistoryFilters } from './HistoryFilters';

const hosts = [
  { id: 1, name: 'bench-a', labels: { provider: 'aws', instanceType: 'c7i.large', region: 'eu-west-1' } },
  { id: 2, name: 'bench-b', labels: { provider: 'gcp', instanceType: null, region: null } },
];
const experiments = [
  { kind: 'cpu', title: 'CPU throughput' },
  { kind: 'cpu_trace', title: 'CPU trace' },
];

function setup(search = '') {
  const onChange = vi.fn();
  const onClear = vi.fn();
  const utils = render(<HistoryFilters filters={readFilters(new URLSearchParams(search)).filters} hosts={hosts} experiments={experiments} onChange={onChange} onClear={onClear} />);
  return { onChange, onClear, user: userEvent.setup(), ...utils };
}

describe('HistoryFilters', () => {
  it('applies selects and dates at once', async () => {
    const { onChange, user } = setup();
    expect(screen.getByRole('search', { name: 'Filter runs' })).toBeInTheDocument();
    await user.selectOptions(screen.getByLabelText('Experiment'), 'cpu_trace');
    expect(onChange).toHaveBeenLastCalledWith({ experiment: 'cpu_trace' });
    await user.selectOptions(screen.getByLabelText('Host'), 'bench-b');
    expect(onChange).toHaveBeenLastCalledWith({ host: '2' });
    await user.selectOptions(screen.getByLabelText('Status'), 'failed');
    expect(onChange).toHaveBeenLastCalledWith({ status: 'failed' });
    await user.type(screen.getByLabelText('Created from'), '2026-11-01');
    expect(onChange).toHaveBeenLastCalledWith({ from: '2026-11-01' });
  });

  it('applies a label field on Enter (not on every key), offering the labels hosts have', async () => {
    const { onChange, user } = setup();
    const field = screen.getByLabelText('Instance type');
    await user.type(field, 'c7i');
    expect(onChange).not.toHaveBeenCalled();
    await user.keyboard('{Enter}');
    expect(onChange).toHaveBeenCalledWith({ instance_type: 'c7i' });
    const options = [...(document.getElementById(field.getAttribute('list') as string)?.querySelectorAll('option') ?? [])].map((o) => o.value);
    expect(options).toEqual(['c7i.large']);
  });

  it('shows the URL state, counts active filters and clears them', async () => {
    const { onClear, user } = setup('experiment=cpu&provider=aws');
    expect(screen.getByLabelText('Experiment')).toHaveValue('cpu');
    expect(screen.getByLabelText('Provider')).toHaveValue('aws');
    await user.click(screen.getByRole('button', { name: 'Clear filters (2)' }));
    expect(onClear).toHaveBeenCalled();
  });

  it('replaces a draft when the URL changes (back button)', () => {
    const { rerender } = setup('provider=aws');
    rerender(<HistoryFilters filters={readFilters(new URLSearchParams('provider=gcp')).filters} hosts={hosts} experiments={experiments} onChange={vi.fn()} onClear={vi.fn()} />);
    expect(screen.getByLabelText('Provider')).toHaveValue('gcp');
  });
});
