/**
 * GET /admin/sessions/export?format=sharegpt: trajectories as JSONL (application/x-ndjson), streamed a page of
 * sessions at a time; filters source, since, until (dates) and status (completed, failed, all).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { SessionSource, SessionStore } from '@herald/agent-core';
import { EXPORT_FORMATS, EXPORT_STATUSES, exportShareGpt, parseExportDate, type ExportStatus } from '../../features/sessions/export.js';
import { SOURCES, errorSchema } from './schemas.js';

interface ExportQuery {
  format: (typeof EXPORT_FORMATS)[number];
  source?: SessionSource;
  since?: string;
  until?: string;
  status?: ExportStatus;
}

export function exportRoutes(app: FastifyInstance, store: SessionStore): void {
  app.get<{ Querystring: ExportQuery }>(
    '/admin/sessions/export',
    {
      schema: {
        summary: 'Export sessions as ShareGPT trajectories (JSONL)',
        querystring: {
          type: 'object',
          required: ['format'],
          additionalProperties: false,
          properties: {
            format: { type: 'string', enum: [...EXPORT_FORMATS] },
            source: { type: 'string', enum: [...SOURCES] },
            since: { type: 'string', description: 'Sessions started on or after this date (2025-03-01 or ISO time)' },
            until: { type: 'string', description: 'Sessions started before this date' },
            status: { type: 'string', enum: [...EXPORT_STATUSES], default: 'all' },
          },
        },
        response: { 400: errorSchema },
      },
    },
    async (req, reply) => {
      let since: number | undefined;
      let until: number | undefined;
      try {
        since = req.query.since === undefined ? undefined : parseExportDate(req.query.since, 'since');
        until = req.query.until === undefined ? undefined : parseExportDate(req.query.until, 'until');
      } catch (err) {
        return reply.code(400).send({ error: (err as Error).message });
      }
      const lines = exportShareGpt(store, { source: req.query.source, since, until, status: req.query.status });
      return reply.type('application/x-ndjson; charset=utf-8').send(Readable.from(lines));
    },
  );
}
