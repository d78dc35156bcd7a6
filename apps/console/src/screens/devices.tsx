/**
 * Devices: pair a new terminal (its pairing code and a QR code of the pairing address), name,
 * location, last seen, app version, queue depth, shift closes, revoke.
 */
import QRCode from 'qrcode';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Device, PairingAnswer, Shift } from '../api/types.ts';
import { ConfirmDialog, Dialog } from '../components/dialog.tsx';
import { Checkbox, Field } from '../components/field.tsx';
import { DoneActions, FormActions } from '../components/form-actions.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { useLang } from '../components/money.tsx';
import { Empty, ErrorNotice, Loaded } from '../components/notice.tsx';
import { RecordTable } from '../components/record-table.tsx';
import { formatDateTime } from '../format/dates.ts';
import { formatCount } from '../format/money.ts';
import { useCan, useConsole } from '../session.tsx';
import { useLoad } from '../use-load.ts';

export default function Devices() {
  const { t } = useTranslation();
  const lang = useLang();
  const { api, timeZone } = useConsole();
  const canChange = useCan('manager');
  const state = useLoad(() => api.get<{ devices: Device[] }>('/devices'), []);
  const shifts = useLoad(() => api.get<{ shifts: Shift[] }>('/shifts', { limit: 20 }), []);
  const [pairing, setPairing] = useState(false);
  const [editing, setEditing] = useState<Device | null>(null);
  const [revoking, setRevoking] = useState<Device | null>(null);
  const [error, setError] = useState<unknown>(null);

  return (
    <>
      <h1 tabIndex={-1}>{t('devices.title')}</h1>
      {canChange && (
        <div className="actions">
          <button
            type="button"
            className="primary"
            onClick={() => setPairing(true)}
            data-testid="pair-device"
          >
            {t('devices.pair')}
          </button>
        </div>
      )}
      <Loaded state={state}>
        {({ devices }) =>
          devices.length === 0 ? (
            <Empty>{t('devices.none')}</Empty>
          ) : (
            <div className="table-wrap">
              <RecordTable
                testId="devices-table"
                rows={devices}
                rowKey={(d) => d.deviceId}
                columns={[
                  {
                    header: t('devices.name'),
                    cell: (d) => (
                      <>
                        <bdi>{d.name}</bdi>
                        {d.sandbox ? ` (${t('devices.sandbox')})` : ''}
                      </>
                    ),
                  },
                  { header: t('devices.location'), cell: (d) => <bdi>{d.location ?? '—'}</bdi> },
                  {
                    header: t('devices.status'),
                    cell: (d) =>
                      t(`deviceStatuses.${d.status.replaceAll(' ', '_')}`, { defaultValue: d.status }),
                  },
                  {
                    header: t('devices.lastSeen'),
                    cell: (d) => (d.lastSeenAt ? formatDateTime(d.lastSeenAt, lang, timeZone) : '—'),
                  },
                  { header: t('devices.appVersion'), cell: (d) => d.appVersion ?? '—' },
                  { header: t('devices.queue'), cell: (d) => formatCount(d.queueDepth ?? 0, lang) },
                  {
                    header: t('devices.lastShift'),
                    cell: (d) =>
                      d.lastShiftClosedAt ? formatDateTime(d.lastShiftClosedAt, lang, timeZone) : '—',
                  },
                  {
                    header: t('common.actions'),
                    hidden: !canChange,
                    className: 'row-actions',
                    cell: (d) => (
                      <>
                        <button
                          type="button"
                          className="link-button"
                          onClick={() => setEditing(d)}
                          aria-label={`${t('common.edit')} ${d.name}`}
                        >
                          {t('common.edit')}
                        </button>
                        {d.status !== 'revoked' && (
                          <button
                            type="button"
                            className="link-button danger-text"
                            onClick={() => setRevoking(d)}
                            aria-label={`${t('devices.revoke')} ${d.name}`}
                          >
                            {t('devices.revoke')}
                          </button>
                        )}
                      </>
                    ),
                  },
                ]}
              />
            </div>
          )
        }
      </Loaded>
      <section aria-labelledby="shifts-title">
        <h2 id="shifts-title">{t('devices.shifts')}</h2>
        <Loaded state={shifts}>
          {({ shifts: list }) =>
            list.length === 0 ? (
              <Empty>{t('devices.noShifts')}</Empty>
            ) : (
              <RecordTable
                rows={list}
                rowKey={(s) => s.closeId}
                columns={[
                  { header: t('devices.name'), cell: (s) => <bdi>{s.deviceName}</bdi> },
                  { header: t('devices.opened'), cell: (s) => formatDateTime(s.openedAt, lang, timeZone) },
                  { header: t('devices.closed'), cell: (s) => formatDateTime(s.closedAt, lang, timeZone) },
                  { header: t('devices.closedBy'), cell: (s) => <bdi>{s.closedBy ?? '—'}</bdi> },
                ]}
              />
            )
          }
        </Loaded>
      </section>
      {pairing && (
        <PairDialog
          onClose={() => {
            setPairing(false);
            state.reload();
          }}
        />
      )}
      {editing && (
        <EditDevice
          device={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            state.reload();
          }}
        />
      )}
      {revoking && (
        <ConfirmDialog
          title={t('devices.revokeTitle', { name: revoking.name })}
          message={t('devices.revokeConfirm')}
          confirmLabel={t('devices.revoke')}
          danger
          onClose={() => {
            setRevoking(null);
            setError(null);
          }}
          onConfirm={async () => {
            try {
              await api.post(`/devices/${encodeURIComponent(revoking.deviceId)}/revoke`, {});
              setRevoking(null);
              state.reload();
            } catch (e) {
              setError(e);
            }
          }}
          error={<ErrorNotice error={error} />}
        />
      )}
    </>
  );
}

function PairDialog({ onClose }: { onClose(): void }) {
  const { t } = useTranslation();
  const lang = useLang();
  const { api, timeZone } = useConsole();
  const [name, setName] = useState('');
  const [location, setLocation] = useState('');
  // A training terminal: its donations go to the sandbox gateway only.
  const [sandbox, setSandbox] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [paired, setPaired] = useState<PairingAnswer | null>(null);
  const [qr, setQr] = useState<string | null>(null);
  useEffect(() => {
    if (!paired) return;
    let live = true;
    QRCode.toDataURL(paired.pairingUrl, { margin: 1, width: 220, errorCorrectionLevel: 'M' }).then(
      (url) => live && setQr(url),
      () => live && setQr(null),
    );
    return () => {
      live = false;
    };
  }, [paired]);
  return (
    <Dialog title={t('devices.pairTitle')} onClose={onClose} testId="pair-dialog">
      {paired ? (
        <div className="pairing">
          <p>{t('devices.pairInstructions')}</p>
          <p className="pairing-code" data-testid="pairing-code" dir="ltr">
            {paired.pairingCode}
          </p>
          {qr && <img src={qr} width={220} height={220} alt={t('devices.qrAlt')} data-testid="pairing-qr" />}
          <p>
            <a href={paired.pairingUrl} dir="ltr" className="url">
              {paired.pairingUrl}
            </a>
          </p>
          <p className="muted">
            {t('devices.expires', { time: formatDateTime(paired.expiresAt, lang, timeZone) })}
          </p>
          <DoneActions onDone={onClose} />
        </div>
      ) : (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            try {
              setPaired(
                await api.post<PairingAnswer>('/devices', {
                  name,
                  ...(location ? { location } : {}),
                  ...(sandbox ? { sandbox } : {}),
                }),
              );
            } catch (err) {
              setError(err);
            }
          }}
        >
          <Field
            label={t('devices.name')}
            value={name}
            onChange={setName}
            required
            maxLength={100}
            name="deviceName"
          />
          <Field label={t('devices.location')} value={location} onChange={setLocation} maxLength={200} />
          <Checkbox label={t('devices.sandboxOption')} checked={sandbox} onChange={setSandbox} />
          <ErrorNotice error={error} />
          <FormActions submitLabel={t('devices.createCode')} submitTestId="pair-submit" onCancel={onClose} />
        </form>
      )}
    </Dialog>
  );
}

function EditDevice({ device, onClose, onSaved }: { device: Device; onClose(): void; onSaved(): void }) {
  const { t } = useTranslation();
  const { api } = useConsole();
  const [name, setName] = useState(device.name);
  const [location, setLocation] = useState(device.location ?? '');
  return (
    <FormDialog
      title={`${t('common.edit')}: ${device.name}`}
      onClose={onClose}
      onSubmit={async () => {
        await api.patch(`/devices/${encodeURIComponent(device.deviceId)}`, {
          name,
          location: location || null,
        });
        onSaved();
      }}
    >
      <Field label={t('devices.name')} value={name} onChange={setName} required />
      <Field label={t('devices.location')} value={location} onChange={setLocation} />
    </FormDialog>
  );
}
