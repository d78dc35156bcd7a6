/** Users (owner): the list, invite (the one-time link shown), change role, disable, reset link. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ConsoleUserRow, Role } from '../api/types.ts';
import { Field, Select } from '../components/field.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { useLang } from '../components/money.tsx';
import { Empty, ErrorNotice, Loaded } from '../components/notice.tsx';
import { RecordTable } from '../components/record-table.tsx';
import { SecretShownOnce } from '../components/secret-shown-once.tsx';
import { formatDateTime } from '../format/dates.ts';
import { useConsole } from '../session.tsx';
import { useLoad } from '../use-load.ts';

const ROLES: Role[] = ['viewer', 'manager', 'owner'];

export default function Users() {
  const { t } = useTranslation();
  const lang = useLang();
  const { api, user: me, timeZone } = useConsole();
  const state = useLoad(() => api.get<{ users: ConsoleUserRow[] }>('/users'), []);
  const [inviting, setInviting] = useState(false);
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  const patch = async (u: ConsoleUserRow, body: { role?: Role; disabled?: boolean }) => {
    setError(null);
    try {
      await api.patch(`/users/${u.userId}`, body);
      state.reload();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <>
      <h1 tabIndex={-1}>{t('users.title')}</h1>
      <div className="actions">
        <button type="button" className="primary" onClick={() => setInviting(true)} data-testid="invite-user">
          {t('users.invite')}
        </button>
      </div>
      <ErrorNotice error={error} />
      <Loaded state={state}>
        {({ users }) =>
          users.length === 0 ? (
            <Empty>{t('users.none')}</Empty>
          ) : (
            <div className="table-wrap">
              <RecordTable
                rows={users}
                rowKey={(u) => u.userId}
                columns={[
                  { header: t('auth.email'), cell: (u) => <bdi>{u.email}</bdi> },
                  { header: t('auth.name'), cell: (u) => <bdi>{u.name ?? '—'}</bdi> },
                  {
                    header: t('users.role'),
                    cell: (u) =>
                      u.userId === me.userId ? (
                        t(`roles.${u.role}`)
                      ) : (
                        <select
                          aria-label={t('users.roleOf', { email: u.email })}
                          value={u.role}
                          onChange={(e) => void patch(u, { role: e.target.value as Role })}
                        >
                          {ROLES.map((r) => (
                            <option key={r} value={r}>
                              {t(`roles.${r}`)}
                            </option>
                          ))}
                        </select>
                      ),
                  },
                  {
                    header: t('devices.status'),
                    cell: (u) =>
                      u.disabled
                        ? t('users.disabled')
                        : u.invited
                          ? t('users.invited')
                          : t('integrations.active'),
                  },
                  {
                    header: t('users.lastSignIn'),
                    cell: (u) => (u.lastSignInAt ? formatDateTime(u.lastSignInAt, lang, timeZone) : '—'),
                  },
                  {
                    header: t('common.actions'),
                    className: 'row-actions',
                    cell: (u) => (
                      <>
                        {u.userId !== me.userId && (
                          <button
                            type="button"
                            className="link-button"
                            onClick={() => void patch(u, { disabled: !u.disabled })}
                          >
                            {u.disabled ? t('users.enable') : t('users.disable')}
                          </button>
                        )}
                        <button
                          type="button"
                          className="link-button"
                          onClick={async () => {
                            try {
                              const r = await api.post<{ link: string }>(`/users/${u.userId}/reset`, {});
                              setLink(r.link);
                            } catch (e) {
                              setError(e);
                            }
                          }}
                        >
                          {t('users.resetLink')}
                        </button>
                      </>
                    ),
                  },
                ]}
              />
            </div>
          )
        }
      </Loaded>
      {inviting && (
        <InviteDialog
          onClose={() => setInviting(false)}
          onInvited={(l) => {
            setInviting(false);
            if (l) setLink(l);
            state.reload();
          }}
        />
      )}
      {link && (
        <SecretShownOnce
          title={t('users.linkTitle')}
          warning={t('users.linkText')}
          value={link}
          testId="link-shown"
          valueTestId="one-time-link"
          onClose={() => setLink(null)}
        />
      )}
    </>
  );
}

function InviteDialog({
  onClose,
  onInvited,
}: {
  onClose(): void;
  onInvited(link: string | undefined): void;
}) {
  const { t } = useTranslation();
  const { api } = useConsole();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  return (
    <FormDialog
      title={t('users.invite')}
      onClose={onClose}
      submitLabel={t('users.sendInvite')}
      onSubmit={async () => {
        const r = await api.post<{ link?: string }>('/users', { email, role, ...(name ? { name } : {}) });
        onInvited(r.link);
      }}
    >
      <Field label={t('auth.email')} type="email" value={email} onChange={setEmail} required />
      <Field label={t('auth.name')} value={name} onChange={setName} />
      <Select
        label={t('users.role')}
        value={role}
        onChange={(v) => setRole(v as Role)}
        options={ROLES.map((r) => ({ value: r, label: t(`roles.${r}`) }))}
      />
    </FormDialog>
  );
}
