/** The operator console (see routes.ts); mounted with the admin API when HERALD_ADMIN_TOKEN is set. */
export { consoleRoutes as mountConsole } from './routes.js';
