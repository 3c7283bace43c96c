import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FILTER_LIMITS, filterAccepts, parseFilter, type EventFilter } from '../src/index.ts';

const compile = (input: unknown): EventFilter => {
  const parsed = parseFilter(input, 'filter');
  if (!parsed.ok) throw new Error(`${parsed.field}: ${parsed.problem}`);
  return parsed.filter;
};
const refusal = (input: unknown): string => {
  const parsed = parseFilter(input, 'destinations[0].filter');
  assert.equal(parsed.ok, false, 'the filter should be refused');
  return parsed.ok ? '' : `${parsed.field}: ${parsed.problem}`;
};
const track = (event: string, properties: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  type: 'track',
  event,
  properties,
  ...extra,
});
const accepts = (where: unknown, call: Record<string, unknown>) => filterAccepts(compile({ where }), call);

describe('event filters: types and event names', () => {
  it('types keeps only the listed call types', () => {
    const f = compile({ types: ['track', 'identify'] });
    assert.equal(filterAccepts(f, track('A')), true);
    assert.equal(filterAccepts(f, { type: 'identify' }), true);
    assert.equal(filterAccepts(f, { type: 'page' }), false);
  });

  it('a deletion notification passes every filter: the destination must hear of it whatever it got', () => {
    const f = compile({ types: ['track'], events: ['Order *'], where: { field: 'properties.total', gt: 0 } });
    assert.equal(filterAccepts(f, { type: 'delete', userId: 'u-3' }), true);
  });

  it('events matches exact names, case-sensitive', () => {
    const f = compile({ events: ['Order Completed'] });
    assert.equal(filterAccepts(f, track('Order Completed')), true);
    assert.equal(filterAccepts(f, track('order completed')), false);
    assert.equal(filterAccepts(f, track('Order Completed ')), false);
    assert.equal(filterAccepts(f, { type: 'track' }), false, 'a track call without a name matches no name');
  });

  it('events judges track calls only; types: [track] drops the rest', () => {
    assert.equal(filterAccepts(compile({ events: ['A'] }), { type: 'identify' }), true);
    assert.equal(filterAccepts(compile({ types: ['track'], events: ['A'] }), { type: 'identify' }), false);
  });

  it('* matches any run of characters, none included, anywhere in the name', () => {
    const f = compile({ events: ['Order *', '*Viewed', 'Cart*Item*Added', '*'] });
    const only = (pattern: string, name: string) => filterAccepts(compile({ events: [pattern] }), track(name));
    assert.equal(only('Order *', 'Order Completed'), true);
    assert.equal(only('Order *', 'Order '), true);
    assert.equal(only('Order *', 'Order'), false);
    assert.equal(only('Order *', 'New Order X'), false);
    assert.equal(only('*Viewed', 'Product Viewed'), true);
    assert.equal(only('*Viewed', 'Viewed Product'), false);
    assert.equal(only('Cart*Item*Added', 'Cart Item Added'), true);
    assert.equal(only('Cart*Item*Added', 'CartItemAdded'), true);
    assert.equal(only('Cart*Item*Added', 'Cart Added Item'), false);
    assert.equal(only('a*a', 'a'), false, 'the prefix and the suffix may not overlap');
    assert.equal(only('a*b*b', 'ab'), false);
    assert.equal(only('*', ''), true);
    assert.equal(filterAccepts(f, track('anything')), true);
  });

  it('types, events and where must all accept the call', () => {
    const f = compile({ types: ['track'], events: ['Order *'], where: { field: 'properties.total', gte: 10 } });
    assert.equal(filterAccepts(f, track('Order Completed', { total: 10 })), true);
    assert.equal(filterAccepts(f, track('Order Completed', { total: 9 })), false);
    assert.equal(filterAccepts(f, track('Signed Up', { total: 10 })), false);
  });
});

describe('event filters: where, each operator at its edges', () => {
  const call = track(
    'E',
    { plan: 'pro', total: 100, zero: 0, none: null, flag: false, items: [{ sku: 'a-1' }] },
    {
      userId: 'user-42',
    },
  );

  it('equals compares strictly: no string-number or null-missing coercion', () => {
    assert.equal(accepts({ field: 'properties.plan', equals: 'pro' }, call), true);
    assert.equal(accepts({ field: 'properties.plan', equals: 'Pro' }, call), false);
    assert.equal(accepts({ field: 'properties.total', equals: 100 }, call), true);
    assert.equal(accepts({ field: 'properties.total', equals: '100' }, call), false);
    assert.equal(accepts({ field: 'properties.none', equals: null }, call), true);
    assert.equal(accepts({ field: 'properties.missing', equals: null }, call), false);
    assert.equal(accepts({ field: 'properties.flag', equals: false }, call), true);
    assert.equal(accepts({ field: 'properties.zero', equals: false }, call), false);
  });

  it('in is equals against any of its values', () => {
    assert.equal(accepts({ field: 'properties.plan', in: ['free', 'pro'] }, call), true);
    assert.equal(accepts({ field: 'properties.plan', in: ['free', 'team'] }, call), false);
    assert.equal(accepts({ field: 'properties.total', in: ['100', 100.5] }, call), false);
    assert.equal(accepts({ field: 'properties.none', in: [null] }, call), true);
    assert.equal(accepts({ field: 'properties.missing', in: [null] }, call), false);
  });

  it('exists: present (null counts) or absent', () => {
    assert.equal(accepts({ field: 'properties.none', exists: true }, call), true);
    assert.equal(accepts({ field: 'properties.zero', exists: true }, call), true);
    assert.equal(accepts({ field: 'properties.missing', exists: true }, call), false);
    assert.equal(accepts({ field: 'properties.missing', exists: false }, call), true);
    assert.equal(accepts({ field: 'properties.plan.deeper', exists: false }, call), true);
  });

  it('prefix applies to strings only', () => {
    assert.equal(accepts({ field: 'userId', prefix: 'user-' }, call), true);
    assert.equal(accepts({ field: 'userId', prefix: 'User-' }, call), false);
    assert.equal(accepts({ field: 'userId', prefix: 'user-42' }, call), true);
    assert.equal(accepts({ field: 'properties.total', prefix: '1' }, call), false);
  });

  it('gt, gte, lt, lte at the boundary, numbers only', () => {
    const at = (op: string, value: number) => accepts({ field: 'properties.total', [op]: value }, call);
    assert.deepEqual(
      [
        at('gt', 100),
        at('gt', 99.9),
        at('gte', 100),
        at('gte', 100.1),
        at('lt', 100),
        at('lt', 100.1),
        at('lte', 100),
        at('lte', 99),
      ],
      [false, true, true, false, false, true, true, false],
    );
    assert.equal(accepts({ field: 'properties.plan', gt: 0 }, call), false, 'a string is no number');
    assert.equal(accepts({ field: 'properties.missing', lt: 1 }, call), false);
    assert.equal(accepts({ field: 'properties.none', lt: 1 }, call), false, 'null is no number');
  });

  it('paths go through arrays by index, and only through own properties', () => {
    assert.equal(accepts({ field: 'properties.items.0.sku', equals: 'a-1' }, call), true);
    assert.equal(accepts({ field: 'properties.items.1.sku', exists: false }, call), true);
    assert.equal(accepts({ field: 'properties.items.00.sku', exists: false }, call), true);
    assert.equal(accepts({ field: 'properties.items.length', exists: false }, call), true);
    assert.equal(accepts({ field: '__proto__', exists: false }, call), true);
    assert.equal(accepts({ field: 'properties.constructor.name', exists: false }, call), true);
    assert.equal(accepts({ field: 'properties.plan.length', exists: false }, call), true);
    assert.equal(accepts({ field: 'properties.toString', exists: false }, call), true);
  });

  it('all, any and not nest', () => {
    const where = {
      all: [
        { field: 'properties.plan', in: ['pro', 'team'] },
        { any: [{ field: 'properties.total', gt: 500 }, { not: { field: 'userId', prefix: 'test-' } }] },
      ],
    };
    assert.equal(accepts(where, call), true);
    assert.equal(accepts(where, { ...call, userId: 'test-1' }), false);
    assert.equal(accepts(where, { ...call, userId: 'test-1', properties: { plan: 'pro', total: 501 } }), true);
    assert.equal(accepts(where, { ...call, properties: { plan: 'free' } }), false);
    assert.equal(accepts({ not: { not: { field: 'userId', exists: true } } }, call), true);
  });
});

describe('event filters: refused at load, naming the field', () => {
  const cases: [string, unknown, string][] = [
    ['not an object', 'track', 'destinations[0].filter: must be an object with types, events and/or where'],
    ['empty', {}, 'destinations[0].filter: must set at least one of types, events, where'],
    ['unknown key', { type: ['track'] }, 'destinations[0].filter.type: is not a known setting'],
    [
      'unknown type',
      { types: ['track', 'delete'] },
      'destinations[0].filter.types[1]: must be one of identify, track, page, screen, group, alias',
    ],
    ['empty types', { types: [] }, 'destinations[0].filter.types: must be a non-empty list'],
    [
      'empty name',
      { events: ['A', ''] },
      'destinations[0].filter.events[1]: must be a non-empty string of at most 256 characters',
    ],
    [
      'too many wildcards',
      { events: ['a*b*c*d*e*f'] },
      'destinations[0].filter.events[0]: must have at most 4 * wildcards',
    ],
    [
      'a number compared with a string',
      {
        where: {
          all: [
            { field: 'type', equals: 'track' },
            { field: 'a', exists: true },
            { field: 'properties.total', gte: '10' },
          ],
        },
      },
      'destinations[0].filter.where.all[2].gte: must be a number',
    ],
    [
      'no operator',
      { where: { field: 'userId' } },
      'destinations[0].filter.where: must have exactly one operator of equals, in, exists, prefix, gt, gte, lt, lte, got none',
    ],
    [
      'two operators',
      { where: { field: 'x', gt: 1, lt: 2 } },
      'destinations[0].filter.where: must have exactly one operator of equals, in, exists, prefix, gt, gte, lt, lte, got gt, lt',
    ],
    [
      'no field',
      { where: { any: [{ equals: 1 }] } },
      'destinations[0].filter.where.any[0].field: is required: must be a non-empty string of at most 256 characters, a dotted path like properties.plan',
    ],
    [
      'empty segment',
      { where: { field: 'properties..plan', exists: true } },
      'destinations[0].filter.where.field: must be a dotted path with no empty segment',
    ],
    [
      'a group with another key',
      { where: { all: [{ field: 'a', exists: true }], field: 'b' } },
      'destinations[0].filter.where.field: is not a known setting',
    ],
    ['an empty group', { where: { any: [] } }, 'destinations[0].filter.where.any: must be a non-empty list'],
    [
      'not given a list',
      { where: { not: [{ field: 'a', exists: true }] } },
      'destinations[0].filter.where.not: must be a condition object (all, any, not, or field with one operator)',
    ],
    [
      'exists not boolean',
      { where: { field: 'a', exists: 'yes' } },
      'destinations[0].filter.where.exists: must be true or false',
    ],
    [
      'an object to compare with',
      { where: { field: 'a', in: ['x', { y: 1 }] } },
      'destinations[0].filter.where.in[1]: must be a string (at most 256 characters), a number, true, false or null',
    ],
    [
      'an infinite number',
      { where: { field: 'a', lt: Number.POSITIVE_INFINITY } },
      'destinations[0].filter.where.lt: must be a number',
    ],
    [
      'a regex operator',
      { where: { field: 'a', regex: '^(a+)+$' } },
      'destinations[0].filter.where.regex: is not a known setting',
    ],
  ];
  for (const [name, input, message] of cases) it(name, () => assert.equal(refusal(input), message));
});

describe('event filters: limits', () => {
  const leaf = { field: 'properties.n', gte: 0 };
  it(`at most ${FILTER_LIMITS.conditions} conditions`, () => {
    compile({ where: { all: Array(FILTER_LIMITS.conditions).fill(leaf) } });
    const over = Array(FILTER_LIMITS.conditions + 1).fill(leaf);
    assert.equal(
      refusal({ where: { any: over } }),
      `destinations[0].filter.where.any: must have at most ${FILTER_LIMITS.conditions} entries, got ${FILTER_LIMITS.conditions + 1}`,
    );
    const split = { all: [{ all: Array(FILTER_LIMITS.conditions).fill(leaf) }, leaf] };
    assert.equal(
      refusal({ where: split }),
      `destinations[0].filter.where.all[1]: is one condition more than the ${FILTER_LIMITS.conditions} allowed per filter`,
    );
  });

  it(`at most ${FILTER_LIMITS.depth} levels`, () => {
    let where: unknown = leaf;
    for (let i = 1; i < FILTER_LIMITS.depth; i += 1) where = { not: where };
    compile({ where });
    assert.match(
      refusal({ where: { all: [where] } }),
      /^destinations\[0\]\.filter\.where\.all\[0\](\.not){5}: nests deeper than 6 levels$/,
    );
  });

  it('values per in, names, string lengths and path segments', () => {
    const long = 'x'.repeat(FILTER_LIMITS.stringLength + 1);
    assert.match(
      refusal({ where: { field: 'a', in: Array(FILTER_LIMITS.inValues + 1).fill(1) } }),
      /where\.in: must have at most 256 entries/,
    );
    assert.match(
      refusal({ events: Array(FILTER_LIMITS.eventNames + 1).fill('A') }),
      /events: must have at most 256 entries/,
    );
    const patterns = Array.from({ length: FILTER_LIMITS.patterns + 1 }, (_, i) => `E${i} *`);
    compile({ events: [...patterns.slice(0, -1), 'Exact'] });
    assert.equal(
      refusal({ events: patterns }),
      `destinations[0].filter.events[${FILTER_LIMITS.patterns}]: is one name with * more than the ${FILTER_LIMITS.patterns} allowed`,
    );
    assert.match(refusal({ where: { field: 'a', equals: long } }), /where\.equals: must be a string \(at most 256/);
    assert.match(refusal({ where: { field: 'a', prefix: long } }), /where\.prefix: must be a non-empty string/);
    assert.match(refusal({ where: { field: long, exists: true } }), /where\.field: is required/);
    assert.match(
      refusal({ where: { field: 'a.b.c.d.e.f.g.h.i', exists: true } }),
      /where\.field: must have at most 8 segments/,
    );
    compile({ where: { field: 'a.b.c.d.e.f.g.h', equals: 'x'.repeat(FILTER_LIMITS.stringLength) } });
  });

  it('a parsed filter is plain data that survives structuredClone', () => {
    const f = compile({ types: ['track'], events: ['A*'], where: { field: 'a', in: [1, 2] } });
    const copy = structuredClone(f);
    assert.equal(filterAccepts(copy, track('Ab', {}, { a: 2 })), true);
  });
});
