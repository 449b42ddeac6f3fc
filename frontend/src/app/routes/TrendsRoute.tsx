// /trends: the trends feature's page, with the experiments (their titles and their rows' words: streams, message
// sizes) that name its metrics.
import { useExperiments } from '../../features/jobs/api/get-experiments';
import { TrendsPage } from '../../features/trends/components/TrendsPage';

export function TrendsRoute() {
  const experiments = useExperiments().data?.data;
  return <TrendsPage experiments={experiments} />;
}
