// Add a person: a role, and either a password set now or a one-time sign-in link to hand over (they
// choose their own password when they open it). The link is shown once, with a copy button.
import { useId, useState, type FormEvent } from 'react';
import { CopyableText } from '../../../components/CopyButton';
import { TextField } from '../../../components/TextField';
import { ApiError, errorMessage } from '../../../lib/api/errors';
import type { Role, UserCreated } from '../../../lib/api/types';
import { ROLES, roleDescriptions } from '../../../lib/auth/roles';
import { absoluteLink } from '../lib/links';
import { useCreateUser } from '../api/create-user';

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

export function SignInLinkShown({ name, link }: { name: string; link: string }) {
  return (
    <div className="secret-once">
      <p className="secret-warning" role="note">
        Give {name} this sign-in link. <strong>It works once</strong> and expires; opening it signs them in and asks them to choose a
        password. You will not see it again here (you can make a new one, which replaces it).
      </p>
      <CopyableText text={absoluteLink(link)} label="Sign-in link" testId="sign-in-link" />
    </div>
  );
}

function nameProblemOf(name: string): string | null {
  return !name.trim() ? 'Enter a name' : !NAME_RE.test(name.trim()) ? 'Letters, digits and . _ @ - (at most 64), starting with a letter or digit' : null;
}

function passwordProblemOf(password: string): string | null {
  return password.length < 10 ? 'At least 10 characters' : password.length > 256 ? 'At most 256 characters' : null;
}

/** The server's refusal: each 422 issue with the field it names, else the error's message. */
function serverProblemOf(error: Error): string {
  return error instanceof ApiError && error.issues.length ? error.issues.map((i) => `${i.loc[i.loc.length - 1]}: ${i.msg}`).join('; ') : errorMessage(error);
}

export function AddUserForm({ onDone }: { onDone?: () => void }) {
  const id = useId();
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [how, setHow] = useState<'link' | 'password'>('link');
  const [password, setPassword] = useState('');
  const [touched, setTouched] = useState(false);
  const [created, setCreated] = useState<UserCreated | null>(null);
  const create = useCreateUser();

  const nameProblem = nameProblemOf(name);
  const pwProblem = how === 'password' ? passwordProblemOf(password) : null;
  const serverError = create.isError ? serverProblemOf(create.error) : null;

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (nameProblem || pwProblem) return;
    create.mutate(
      { name: name.trim(), role, password: how === 'password' ? password : null },
      {
        onSuccess: (c) => {
          setCreated(c);
          setPassword('');
        },
      },
    );
  };

  if (created) {
    return (
      <UserAdded
        created={created}
        onAnother={() => {
          setCreated(null);
          setName('');
          setTouched(false);
          create.reset();
        }}
        onDone={onDone}
      />
    );
  }

  const nameShown = touched ? nameProblem : null;
  const pwShown = touched ? pwProblem : null;
  return (
    <form className="form" aria-label="Add user" onSubmit={onSubmit} noValidate>
      <TextField
        id={`${id}-name`}
        label="Name"
        error={nameShown}
        type="text"
        autoComplete="off"
        autoCapitalize="none"
        spellCheck={false}
        value={name}
        onChange={(e) => setName(e.target.value)}
      />
      <RoleField id={`${id}-role`} role={role} onChange={setRole} />
      <fieldset className="fieldset">
        <legend>How they sign in the first time</legend>
        <label className="check">
          <input type="radio" name={`${id}-how`} value="link" checked={how === 'link'} onChange={() => setHow('link')} />
          A one-time sign-in link (they choose their password)
        </label>
        <label className="check">
          <input type="radio" name={`${id}-how`} value="password" checked={how === 'password'} onChange={() => setHow('password')} />
          A password I set now
        </label>
        {how === 'password' ? (
          <TextField
            id={`${id}-password`}
            label="Password"
            error={pwShown}
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        ) : null}
      </fieldset>
      {serverError ? (
        <p className="field-error" role="alert">
          Could not add the user: {serverError}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          {create.isPending ? 'Adding…' : 'Add user'}
        </button>
        {onDone ? (
          <button type="button" className="button button-ghost" onClick={onDone}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}

/** After adding: who was added, their sign-in link (once) when they have no password, and what next. */
function UserAdded({ created, onAnother, onDone }: { created: UserCreated; onAnother: () => void; onDone?: () => void }) {
  const id = useId();
  return (
    <section aria-labelledby={`${id}-done`} className="add-user-done">
      <h3 id={`${id}-done`}>
        Added {created.user.name} <span className="muted">({created.user.role})</span>
      </h3>
      {created.sign_in_link ? <SignInLinkShown name={created.user.name} link={created.sign_in_link} /> : <p>They can sign in with the password you set.</p>}
      <div className="form-actions">
        <button type="button" className="button" onClick={onAnother}>
          Add another
        </button>
        {onDone ? (
          <button type="button" className="button button-ghost" onClick={onDone}>
            Done
          </button>
        ) : null}
      </div>
    </section>
  );
}

/** The role to give, with what that role may do. */
function RoleField({ id, role, onChange }: { id: string; role: Role; onChange: (role: Role) => void }) {
  return (
    <div className="field">
      <label htmlFor={id}>Role</label>
      <select id={id} value={role} onChange={(e) => onChange(e.target.value as Role)} aria-describedby={`${id}-help`}>
        {ROLES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      <p id={`${id}-help`} className="help">
        {roleDescriptions[role]}
      </p>
    </div>
  );
}
