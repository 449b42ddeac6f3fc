import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { user as userRow } from '../../../test/fixtures';
import { jsonResponse, renderWithProviders } from '../../../test/render';
import { AddUserForm } from './AddUserForm';
import { UsersTable } from './UsersTable';

afterEach(() => vi.unstubAllGlobals());

function serve(answer: (req: Request) => Response) {
  const fetchMock = vi.fn(async (req: Request) => answer(req));
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}
const sent = (fetchMock: ReturnType<typeof serve>, method: string) => fetchMock.mock.calls.map(([r]) => r).filter((r) => r.method === method);

describe('AddUserForm', () => {
  it('adds a person with a one-time sign-in link, shown whole with a copy button', async () => {
    const fetchMock = serve(() => jsonResponse({ user: userRow({ name: 'nia', role: 'operator', has_password: false }), sign_in_link: '/signin/link#hblink_xyz' }, 201));
    const user = userEvent.setup();
    renderWithProviders(<AddUserForm />);
    await user.click(screen.getByRole('button', { name: 'Add user' }));
    expect(screen.getByLabelText('Name')).toHaveAccessibleDescription('Enter a name');
    await user.type(screen.getByLabelText('Name'), 'nia');
    await user.selectOptions(screen.getByLabelText('Role'), 'operator');
    expect(screen.getByLabelText('Role')).toHaveAccessibleDescription(/creates jobs/);
    expect(screen.getByRole('radio', { name: /one-time sign-in link/ })).toBeChecked();
    await user.click(screen.getByRole('button', { name: 'Add user' }));
    expect(await sent(fetchMock, 'POST')[0]?.json()).toEqual({ name: 'nia', role: 'operator', password: null });

    expect(await screen.findByRole('heading', { name: 'Added nia (operator)' })).toBeInTheDocument();
    const link = `${window.location.origin}/signin/link#hblink_xyz`;
    expect(screen.getByTestId('sign-in-link')).toHaveTextContent(link);
    expect(screen.getByRole('note')).toHaveTextContent('It works once');
    await user.click(screen.getByRole('button', { name: 'Copy sign-in link' }));
    expect(await navigator.clipboard.readText()).toBe(link);
  });

  it('or with a password set now (10+ characters), and shows the server’s refusal', async () => {
    const fetchMock = serve(() => jsonResponse({ detail: "a user named 'nia' exists" }, 409));
    const user = userEvent.setup();
    renderWithProviders(<AddUserForm />);
    await user.type(screen.getByLabelText('Name'), 'nia');
    await user.click(screen.getByRole('radio', { name: 'A password I set now' }));
    await user.type(screen.getByLabelText('Password'), 'short');
    await user.click(screen.getByRole('button', { name: 'Add user' }));
    expect(screen.getByLabelText('Password')).toHaveAccessibleDescription('At least 10 characters');
    expect(fetchMock).not.toHaveBeenCalled();
    await user.type(screen.getByLabelText('Password'), ' and more');
    await user.click(screen.getByRole('button', { name: 'Add user' }));
    expect(await sent(fetchMock, 'POST')[0]?.json()).toEqual({ name: 'nia', role: 'viewer', password: 'short and more' });
    expect(await screen.findByRole('alert')).toHaveTextContent("Could not add the user: a user named 'nia' exists");
  });
});

describe('UsersTable', () => {
  const users = [userRow({ id: 1, name: 'ada', role: 'admin' }), userRow({ id: 3, name: 'vera', role: 'viewer', has_password: false })];

  it('changes a role, disables, and never offers to act on oneself', async () => {
    const fetchMock = serve(() => jsonResponse(users[1]));
    const user = userEvent.setup();
    renderWithProviders(<UsersTable users={users} currentUserId={1} />);
    const row = (name: string) => screen.getByRole('rowheader', { name }).closest('tr') as HTMLElement;
    const self = row('ada (you)');
    expect(within(self).queryByRole('button')).not.toBeInTheDocument();
    expect(within(self).queryByRole('combobox')).not.toBeInTheDocument();
    const vera = row('vera');
    expect(vera).toHaveTextContent('no password yet');

    await user.selectOptions(within(vera).getByLabelText('Role of vera'), 'operator');
    let patch = sent(fetchMock, 'PATCH')[0] as Request;
    expect(new URL(patch.url).pathname).toBe('/api/users/3');
    expect(await patch.json()).toEqual({ role: 'operator' });

    await user.click(within(vera).getByRole('button', { name: 'Disable vera' }));
    patch = sent(fetchMock, 'PATCH')[1] as Request;
    expect(await patch.json()).toEqual({ disabled: true });
  });

  it('shows a refusal from the server (e.g. the last admin) in words', async () => {
    serve(() => jsonResponse({ detail: 'the last admin cannot be demoted' }, 409));
    const user = userEvent.setup();
    renderWithProviders(<UsersTable users={[userRow({ id: 1, name: 'ada', role: 'admin' }), userRow({ id: 2, name: 'bo', role: 'admin' })]} currentUserId={1} />);
    await user.selectOptions(screen.getByLabelText('Role of bo'), 'viewer');
    expect(await screen.findByRole('alert')).toHaveTextContent('Could not change the role of bo: the last admin cannot be demoted');
  });

  it('makes a new sign-in link and deletes after asking', async () => {
    const fetchMock = serve((req) =>
      req.method === 'POST' ? jsonResponse({ sign_in_link: '/signin/link#hblink_new' }) : new Response(null, { status: 204 }),
    );
    const user = userEvent.setup();
    renderWithProviders(<UsersTable users={users} currentUserId={1} />);
    await user.click(screen.getByRole('button', { name: 'New sign-in link for vera' }));
    const dialog = await screen.findByRole('dialog', { name: 'Sign-in link for vera' });
    expect(await within(dialog).findByTestId('sign-in-link')).toHaveTextContent('/signin/link#hblink_new');
    expect(new URL((sent(fetchMock, 'POST')[0] as Request).url).pathname).toBe('/api/users/3/sign-in-link');
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Delete vera' }));
    const confirm = screen.getByRole('dialog', { name: 'Delete vera?' });
    await user.click(within(confirm).getByRole('button', { name: 'Delete vera' }));
    expect(new URL((sent(fetchMock, 'DELETE')[0] as Request).url).pathname).toBe('/api/users/3');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  });
});
