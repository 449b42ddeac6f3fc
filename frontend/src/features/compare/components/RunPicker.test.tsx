import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { run } from '../../../test/fixtures';
import { renderWithProviders } from '../../../test/render';
import { RunPicker } from './RunPicker';

function setup(ids: number[], baseline: number | null, recent = [run({ id: 5, status: 'succeeded' }), run({ id: 4, status: 'succeeded' })]) {
  const onChange = vi.fn();
  renderWithProviders(
    <RunPicker
      selection={{ ids, baseline }}
      runsById={new Map(ids.filter((id) => id !== 99).map((id) => [id, run({ id, status: 'succeeded' })]))}
      loadingSelection={false}
      recent={recent}
      recentError={null}
      onChange={onChange}
    />,
  );
  return { onChange, user: userEvent.setup() };
}

describe('RunPicker', () => {
  it('adds runs by id and explains a bad id in place', async () => {
    const { onChange, user } = setup([4], 4);
    const input = screen.getByLabelText('Add run ids');
    await user.type(input, '5, 6{Enter}');
    expect(onChange).toHaveBeenLastCalledWith({ ids: [4, 5, 6], baseline: 4 });
    await user.type(input, 'abc');
    await user.click(screen.getByRole('button', { name: 'Add' }));
    expect(input).toHaveAccessibleDescription('Enter run ids as whole numbers, e.g. 12 or 12, 15');
    expect(input).toHaveAttribute('aria-invalid', 'true');
  });

  it('picks the baseline, removes a run, and ticks recent runs', async () => {
    const { onChange, user } = setup([4, 5], 4);
    await user.click(screen.getByRole('radio', { name: /#5/ }));
    expect(onChange).toHaveBeenLastCalledWith({ ids: [4, 5], baseline: 5 });
    await user.click(screen.getByRole('button', { name: 'Remove run #4' }));
    expect(onChange).toHaveBeenLastCalledWith({ ids: [5], baseline: 5 });
    await user.click(screen.getByRole('checkbox', { name: /#5 bench-a/ }));
    expect(onChange).toHaveBeenLastCalledWith({ ids: [4], baseline: 4 });
  });

  it('says when a requested run does not exist', () => {
    setup([4, 99], 4);
    expect(screen.getByRole('radio', { name: /#99 not found/ })).toBeInTheDocument();
  });
});
