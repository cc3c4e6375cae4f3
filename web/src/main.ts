// termkeep's browser UI: the entry point esbuild bundles into
// /assets/app.js (and the styles into /assets/app.css).
import '@xterm/xterm/css/xterm.css';
import './app.css';
import './controls.css';
import { App } from './app';

const app = new App();
(window as unknown as { __termkeep: object }).__termkeep = app.hook();
void app.start();
