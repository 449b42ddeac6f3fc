// Register only what our charts use, so the bundle carries no unused controllers.
import {
  Chart, Decimation, Legend, LineController, LineElement, LinearScale, PointElement, Tooltip,
} from 'chart.js';

Chart.register(LineController, LineElement, PointElement, LinearScale, Legend, Tooltip, Decimation);

export { Chart };
