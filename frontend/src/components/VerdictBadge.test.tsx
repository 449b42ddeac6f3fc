import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { VerdictBadge, ageText } from './VerdictBadge';

describe('VerdictBadge', () => {
  it('names the verdict in words, toned by how bad it is', () => {
    render(<VerdictBadge verdict="NO_BASELINE" />);
    expect(screen.getByText('NO BASELINE')).toHaveClass('badge-info');
  });
  it('says an age in the unit that reads best', () => {
    expect([ageText(42), ageText(300), ageText(3 * 3600), ageText(3 * 86400)]).toEqual(['42 s', '5 min', '3 h', '3 d']);
  });
});
