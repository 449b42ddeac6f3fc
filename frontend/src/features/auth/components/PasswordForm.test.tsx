import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { PasswordForm } from './PasswordForm';

afterEach(() => vi.unstubAllGlobals());

describe('PasswordForm', () => {
  it('needs the current password, two equal new ones, and says a wrong current password in words', async () => {
    const fetchMock = vi.fn(async (_req: Request) => jsonResponse({ detail: 'the current password is wrong' }, 401));
    vi.stubGlobal('fetch', fetchMock);
    const user = userEvent.setup();
    renderWithProviders(<PasswordForm hasPassword />);
    await user.type(screen.getByLabelText('New password'), 'a long new password');
    await user.type(screen.getByLabelText('Repeat the new password'), 'a long new passwort');
    await user.click(screen.getByRole('button', { name: 'Change password' }));
    expect(screen.getByLabelText('Current password')).toHaveAccessibleDescription('Enter your current password');
    expect(screen.getByLabelText('Repeat the new password')).toHaveAccessibleDescription('The two new passwords differ');
    expect(fetchMock).not.toHaveBeenCalled();

    await user.type(screen.getByLabelText('Current password'), 'old password!');
    await user.clear(screen.getByLabelText('Repeat the new password'));
    await user.type(screen.getByLabelText('Repeat the new password'), 'a long new password');
    await user.click(screen.getByRole('button', { name: 'Change password' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The current password is wrong.');
    const req = fetchMock.mock.calls[0]?.[0] as Request;
    expect(await req.json()).toEqual({ current_password: 'old password!', new_password: 'a long new password' });
  });
});
