/**
 * The model picker's messages between the chat and the extension, apart from the rest of the chat's protocol:
 * the listing of what each endpoint serves, and the model this chat runs with.
 */
import { z } from 'zod';

const short = (max: number) => z.string().max(max);
/** As core/model/endpoints.ts checks names, so that the chat cannot name anything else. */
const EndpointName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}$/);

/** Webview → extension: list the models again (the picker was opened), or pick one for this chat. */
export const PickerRequest = [
  z.object({ type: z.literal('listModels') }).strict(),
  z.object({ type: z.literal('chooseModel'), endpoint: EndpointName, model: z.string().min(1).max(300) }).strict(),
] as const;

/** Extension → webview: each endpoint with its models or its error; and this chat's model. */
export const PickerUpdate = [
  z
    .object({
      type: z.literal('models'),
      endpoints: z
        .array(
          z
            .object({
              name: short(40),
              url: short(1000),
              models: z.array(short(300)).max(500).optional(),
              error: short(2000).optional(),
            })
            .strict(),
        )
        .max(21),
      /** Entries of lean4Agentic.endpoints left out, each with why. */
      problems: z.array(short(1000)).max(40),
    })
    .strict(),
  z
    .object({
      type: z.literal('modelChoice'),
      /** The model ('' until the server names its first), its endpoint's name and URL (without credentials). */
      model: short(300),
      endpoint: short(40),
      url: short(1000),
      /** Picked in this chat (not the settings' default). */
      chosen: z.boolean(),
      /** Why the pick cannot run (its endpoint left the settings). */
      problem: short(2000).optional(),
    })
    .strict(),
] as const;
