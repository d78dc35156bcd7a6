/** The organisation's audit log, newest first, a page at a time. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { AuditEntry } from '../api/types.ts';
import { useLang } from '../components/money.tsx';
import { Empty, Loaded } from '../components/notice.tsx';
import { formatDateTime } from '../format/dates.ts';
import { useConsole } from '../session.tsx';
import { useLoad } from '../use-load.ts';

export default function Audit() {
  const { t } = useTranslation();
  const lang = useLang();
  const { api, timeZone } = useConsole();
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const state = useLoad(
    () => api.get<{ entries: AuditEntry[]; nextCursor: string | null }>('/audit', { cursor, limit: 50 }),
    [cursor],
  );
  return (
    <>
      <h1 tabIndex={-1}>{t('audit.title')}</h1>
      <Loaded state={state}>
        {({ entries, nextCursor }) =>
          entries.length === 0 ? (
            <Empty>{t('audit.none')}</Empty>
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">{t('audit.when')}</th>
                      <th scope="col">{t('audit.who')}</th>
                      <th scope="col">{t('audit.what')}</th>
                      <th scope="col">{t('audit.outcome')}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {entries.map((e) => (
                      <tr key={e.id}>
                        <td>{formatDateTime(e.at, lang, timeZone)}</td>
                        <td>
                          <bdi>{e.actor}</bdi>
                        </td>
                        <td>
                          <code dir="ltr">
                            {e.method} {e.path}
                          </code>
                        </td>
                        <td>
                          {e.outcome} ({e.status})
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <div className="actions">
                {cursors.length > 0 && (
                  <button type="button" onClick={() => setCursors((c) => c.slice(0, -1))}>
                    {t('common.newer')}
                  </button>
                )}
                {nextCursor && (
                  <button type="button" onClick={() => setCursors((c) => [...c, nextCursor])}>
                    {t('common.older')}
                  </button>
                )}
              </div>
            </>
          )
        }
      </Loaded>
    </>
  );
}
