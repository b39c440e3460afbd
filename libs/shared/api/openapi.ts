import { z } from 'zod'
import type { WireErrorCode } from '../domain/index.js'
import { STATUS } from '../http/index.js'
import type { ApiTable, Operation } from './operations.js'
import { ErrorBody } from './shapes.js'

type Json = Record<string, unknown>

/** zod → JSON Schema 2020-12 (what OpenAPI 3.1 uses); named schemas go to components.schemas. */
function schemaOf(s: z.ZodType, components: Json, io: 'input' | 'output'): Json {
  const { $schema: _, $defs, ...schema } = z.toJSONSchema(s, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json
  for (const [name, def] of Object.entries(($defs ?? {}) as Json)) components[name] = retarget(def)
  return retarget(schema) as Json
}

/** `#/$defs/X` (zod's local references) → `#/components/schemas/X` (the document's). */
const retarget = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(retarget)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v).map(([k, x]) => [
            k,
            k === '$ref' && typeof x === 'string' ? x.replace('#/$defs/', '#/components/schemas/') : retarget(x),
          ]),
        )
      : v

function operation(op: Operation, api: ApiTable, components: Json): Json {
  const params = [...op.path.matchAll(/\{(\w+)\}/g)].flatMap((m) => api.pathParams[m[1]!] ?? [])
  const query = op.query
    ? Object.entries(op.query.shape).map(([name, field]) => {
        const { description, ...schema } = schemaOf(field as z.ZodType, components, 'input')
        return {
          in: 'query',
          name,
          required: !(field as z.ZodType).safeParse(undefined).success,
          schema,
          ...(typeof description === 'string' && description && { description }),
        }
      })
    : []
  const responses: Record<string, { description: string; content?: Json }> = {}
  for (const [status, body] of Object.entries(op.ok)) {
    if (!body) continue
    if ('none' in body) responses[status] = { description: body.none }
    else {
      const content = 'text' in body ? { [body.text]: {} } : { 'application/json': { schema: schemaOf(body, components, 'output') } }
      responses[status] = { description: Number(status) < 400 ? 'success' : 'see summary', content }
    }
  }
  const codes = [...new Set(['invalid_request', ...(op.errors ?? []), 'unavailable'])]
  for (const code of codes) {
    const status = String(STATUS[code as WireErrorCode])
    const prev = responses[status]?.description?.replace(/^error: /, '')
    responses[status] = {
      description: `error: ${prev ? `${prev}, ${code}` : code}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    }
  }
  return {
    operationId: `${op.method}${op.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}${op.path === '/' ? 'Root' : ''}`,
    summary: op.summary,
    tags: [op.tag],
    ...(op.auth === 'bearer' && { security: [{ bearer: [] }] }),
    ...(op.auth === 'admin' && { security: [{ admin: [] }] }),
    ...(op.auth === 'optional' && { security: [{}, { bearer: [] }] }),
    ...(params.length + query.length + (op.headers?.length ?? 0) && { parameters: [...params, ...(op.headers ?? []), ...query] }),
    ...(op.body && {
      requestBody: { required: true, content: { 'application/json': { schema: schemaOf(op.body, components, 'input') } } },
    }),
    responses,
  }
}

/**
 * The OpenAPI 3.1 document of an API's table (the board's BOARD_API, served at /sw/openapi.json;
 * the aggregator's, at its /openapi.json), generated from the zod schemas its routes validate
 * with. With `v1Aliases`, `/sw/v1/…` paths refer to `/sw/…`.
 */
export function openApiDocument(api: ApiTable, o: { baseUrl: string; title: string; version: string }): Json {
  const components: Json = {}
  const paths: Record<string, Json> = {}
  for (const op of api.operations) (paths[op.path] ??= {})[op.method] = operation(op, api, components)
  schemaOf(ErrorBody, components, 'output') // registers components.schemas.Error
  if (api.v1Aliases)
    for (const path of Object.keys(paths).filter((p) => p.startsWith('/sw/')))
      paths[`/sw/v1/${path.slice(4)}`] = { $ref: `#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}` }
  return {
    openapi: '3.1.0',
    info: { title: o.title, version: o.version, description: api.description, license: { name: 'MIT', identifier: 'MIT' } },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: o.baseUrl }],
    tags: api.tags.map((name) => ({ name })),
    paths,
    components: { schemas: components, securitySchemes: api.securitySchemes },
  }
}
