// The report of the runs ticked in History: one page (and a self-contained HTML file) for the set.
import { Link } from 'react-router';

export function ReportLink({ ids }: { ids: readonly number[] }) {
  if (!ids.length) return null;
  return (
    <Link className="button" to={`/report?runs=${ids.join(',')}`}>
      Report ({ids.length})
    </Link>
  );
}
