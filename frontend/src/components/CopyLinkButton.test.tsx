import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { CopyLinkButton } from './CopyLinkButton';

describe('CopyLinkButton', () => {
  it('copies the URL, which encodes the view, and says so', async () => {
    const user = userEvent.setup();
    const writeText = vi.spyOn(navigator.clipboard, 'writeText').mockResolvedValue(undefined);
    render(<CopyLinkButton />);
    await user.click(screen.getByRole('button', { name: 'Copy link' }));
    expect(writeText).toHaveBeenCalledWith(window.location.href);
    expect(await screen.findByRole('status')).toHaveTextContent('Link copied');
  });

  it('shows the link to copy by hand when the clipboard is blocked', async () => {
    const user = userEvent.setup();
    vi.spyOn(navigator.clipboard, 'writeText').mockRejectedValue(new Error('denied'));
    render(<CopyLinkButton />);
    await user.click(screen.getByRole('button', { name: 'Copy link' }));
    expect(await screen.findByRole('textbox', { name: 'Link to this view' })).toHaveValue(window.location.href);
  });
});
