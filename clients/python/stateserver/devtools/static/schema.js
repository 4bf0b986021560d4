// The JSON Schema subset the features' action schemas use (type, const, enum, properties,
// required, additionalProperties, items, anyOf, oneOf): enough to check a form's input
// before it is sent, with a JSON Pointer to each problem, as the server reports its own.

const typeOf = (value) => {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
};

const escape = (key) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

/** The problems of `value` against `schema`: [{pointer, reason}], empty when it conforms. */
export function validate(schema, value, pointer = '') {
  if (schema === true || schema === undefined) return [];
  if (schema === false) return [{ pointer, reason: 'no value is allowed here' }];
  const problems = [];
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    problems.push({ pointer, reason: `expected ${JSON.stringify(schema.const)}` });
  }
  if (schema.enum && !schema.enum.some((item) => JSON.stringify(item) === JSON.stringify(value))) {
    problems.push({ pointer, reason: `expected one of: ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}` });
  }
  if (schema.type) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const actual = typeOf(value);
    const fits = types.includes(actual) || (actual === 'integer' && types.includes('number'));
    if (!fits) {
      problems.push({ pointer, reason: `expected ${types.join(' or ')}, found ${actual}` });
      return problems;
    }
  }
  for (const key of ['anyOf', 'oneOf']) {
    if (!schema[key]) continue;
    const matching = schema[key].filter((option) => validate(option, value, pointer).length === 0);
    if (matching.length === 0 || (key === 'oneOf' && matching.length > 1)) {
      const first = schema[key].map((option) => validate(option, value, pointer)).sort((a, b) => a.length - b.length)[0];
      problems.push(...(first && first.length ? first : [{ pointer, reason: `matches ${matching.length} of the ${key} options` }]));
    }
  }
  if (typeOf(value) === 'object') {
    const properties = schema.properties || {};
    for (const name of schema.required || []) {
      if (!(name in value)) problems.push({ pointer: `${pointer}/${escape(name)}`, reason: 'missing' });
    }
    for (const [name, member] of Object.entries(value)) {
      if (name in properties) {
        problems.push(...validate(properties[name], member, `${pointer}/${escape(name)}`));
      } else if (schema.additionalProperties === false) {
        problems.push({ pointer: `${pointer}/${escape(name)}`, reason: 'not a field of this action' });
      } else if (typeof schema.additionalProperties === 'object') {
        problems.push(...validate(schema.additionalProperties, member, `${pointer}/${escape(name)}`));
      }
    }
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, index) => problems.push(...validate(schema.items, item, `${pointer}/${index}`)));
  }
  return problems;
}

/** What kind of input a field's schema asks for: a text box, a number, a choice, a check box
 * or (objects, arrays, unions) JSON typed by hand. */
export function inputKind(schema) {
  if (!schema) return 'json';
  if (schema.enum) return 'choice';
  if (schema.type === 'integer' || schema.type === 'number') return 'number';
  if (schema.type === 'boolean') return 'boolean';
  if (schema.type === 'string') return 'string';
  return 'json';
}
