// Register only what our charts use, so the bundle carries no unused controllers. Our two small
// plugins (error bars, marker lines) are registered here once; they draw nothing unless a chart's
// options or datasets ask for them.
import {
  BarController, BarElement, CategoryScale, Chart, Decimation, Legend, LineController, LineElement, LinearScale,
  PointElement, Tooltip,
} from 'chart.js';
import { errorBarsPlugin } from './plugins/error-bars';
import { markersPlugin } from './plugins/markers';

Chart.register(
  LineController, LineElement, PointElement, LinearScale, Legend, Tooltip, Decimation,
  BarController, BarElement, CategoryScale, errorBarsPlugin, markersPlugin,
);

export { Chart };
