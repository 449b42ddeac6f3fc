// The audit log: when, who, what, on what. Paginated on the server.
import type { AuditEvent } from '../../../lib/api/types';
import { formatDateTime } from '../../../lib/format';
import { actionLabel, detailSummary } from '../lib/detail';

export function AuditTable({ events }: { events: AuditEvent[] }) {
  return (
    <div className="table-scroll">
      <table className="table audit-table">
        <caption className="visually-hidden">Audit log, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Detail</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => (
            <tr key={e.id}>
              <td className="nowrap">
                <time dateTime={e.at}>{formatDateTime(e.at)}</time>
              </td>
              <td>{e.user_name}</td>
              <td>
                <code>{e.action}</code>
                <span className="visually-hidden"> ({actionLabel(e.action)})</span>
              </td>
              <td>{e.target}</td>
              <td className="small">{detailSummary(e.detail)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
