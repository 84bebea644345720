/**
 * Reading the fields of a kernel request. Every failure is a `RequestError` whose message names the
 * field (or cell id) at fault; the comm layer turns it into `{ok: false, error}`.
 */

export class RequestError extends Error {
  override name = 'RequestError';

  /** Extra fields for the `{ok: false}` reply, e.g. the results of the cells that did run. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.details = details;
  }
}

/** A request's fields, as received: anything JSON can carry. */
export type Params = Readonly<Record<string, unknown>>;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** A required list of cell ids. */
export function stringList(params: Params, field: string): string[] {
  const value = params[field];
  if (!Array.isArray(value)) {
    throw new RequestError(`${field} must be a list of cell ids, not ${describe(value)}`);
  }
  value.forEach((item, i) => {
    if (typeof item !== 'string') {
      throw new RequestError(`${field}[${i}] must be a cell id (a string), not ${describe(item)}`);
    }
  });
  return value as string[];
}

export function optionalBoolean(params: Params, field: string, fallback: boolean): boolean {
  const value = params[field];
  if (value === undefined || value === null) {
    return fallback;
  }
  if (typeof value !== 'boolean') {
    throw new RequestError(`${field} must be true or false, not ${describe(value)}`);
  }
  return value;
}

export function optionalCount(params: Params, field: string, fallback: number): number {
  const value = params[field];
  if (value === undefined || value === null) {
    return fallback;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new RequestError(`${field} must be a whole number of 0 or more, not ${JSON.stringify(value)}`);
  }
  return value;
}

/** nbformat lets a source be one string or a list of lines; the model wants one string. */
export function source(value: unknown, field: string): string {
  if (typeof value === 'string') {
    return value;
  }
  if (Array.isArray(value) && value.every(line => typeof line === 'string')) {
    return value.join('');
  }
  throw new RequestError(`${field} must be a string (or a list of strings), not ${describe(value)}`);
}

export type CellType = 'code' | 'markdown' | 'raw';

export function cellType(value: unknown, field: string): CellType {
  if (value === 'code' || value === 'markdown' || value === 'raw') {
    return value;
  }
  throw new RequestError(`${field} must be "code", "markdown" or "raw", not ${JSON.stringify(value)}`);
}

export function metadata(value: unknown, field: string): Record<string, unknown> {
  if (!isObject(value)) {
    throw new RequestError(`${field} must be an object, not ${describe(value)}`);
  }
  return value;
}
