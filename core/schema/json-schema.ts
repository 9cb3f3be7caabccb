import { z } from 'zod';
import { Workflow } from './workflow';
import { Header, TrajectoryEvent } from './trajectory';

/**
 * JSON Schemas generated from the zod schemas (input side: fields with
 * defaults are optional), for editors that validate and complete JSON.
 */
export const JSON_SCHEMAS: Record<string, () => unknown> = {
  workflow: () => z.toJSONSchema(Workflow, { io: 'input', unrepresentable: 'any' }),
  header: () => z.toJSONSchema(Header, { io: 'input', unrepresentable: 'any' }),
  event: () => z.toJSONSchema(TrajectoryEvent, { io: 'input', unrepresentable: 'any' }),
};
