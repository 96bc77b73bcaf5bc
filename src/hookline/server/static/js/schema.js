// A check of edited tool arguments against the tool's JSON schema, as the user types. It knows
// the keywords tool schemas use (type, properties, required, additionalProperties, enum,
// const, items, bounds, anyOf/oneOf, $ref to $defs); the server checks again with the tool's
// own validator and has the last word (its 422 shows in the approval).

const TYPES = {
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number",
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === "boolean",
  null: (v) => v === null,
  array: (v) => Array.isArray(v),
  object: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
};

// The problems of `value` against `schema`: ["target: expected a string", ...]; [] when it fits.
export function problemsOf(value, schema, root = schema, path = "") {
  if (!schema || typeof schema !== "object") return [];
  if (schema.$ref) return problemsOf(value, resolve(root, schema.$ref), root, path);
  const at = path || "the arguments";
  const problems = [];
  const types = [].concat(schema.type || []);
  if (types.length && !types.some((t) => TYPES[t]?.(value))) return [`${at}: expected ${types.join(" or ")}`];
  if (schema.enum && !schema.enum.some((v) => same(v, value))) problems.push(`${at}: expected one of ${JSON.stringify(schema.enum)}`);
  if ("const" in schema && !same(schema.const, value)) problems.push(`${at}: expected ${JSON.stringify(schema.const)}`);
  for (const options of [schema.anyOf, schema.oneOf].filter(Boolean)) {
    if (!options.some((option) => !problemsOf(value, option, root, path).length)) problems.push(`${at}: fits none of its forms`);
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${at}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${at}: above ${schema.maximum}`);
  }
  if (typeof value === "string") {
    if (schema.minLength !== undefined && value.length < schema.minLength) problems.push(`${at}: too short`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength) problems.push(`${at}: too long`);
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => problems.push(...problemsOf(item, schema.items, root, `${path}[${i}]`)));
  }
  if (TYPES.object(value)) problems.push(...objectProblems(value, schema, root, path));
  return problems;
}

function objectProblems(value, schema, root, path) {
  const problems = [];
  const properties = schema.properties || {};
  for (const name of schema.required || []) {
    if (!(name in value)) problems.push(`${path ? `${path}.` : ""}${name}: missing`);
  }
  for (const [name, item] of Object.entries(value)) {
    const where = path ? `${path}.${name}` : name;
    if (name in properties) problems.push(...problemsOf(item, properties[name], root, where));
    else if (schema.additionalProperties === false) problems.push(`${where}: not an argument of this tool`);
    else if (typeof schema.additionalProperties === "object") {
      problems.push(...problemsOf(item, schema.additionalProperties, root, where));
    }
  }
  return problems;
}

function resolve(root, ref) {
  if (!ref.startsWith("#/")) return {};
  return ref.slice(2).split("/").reduce((node, key) => (node ? node[key] : undefined), root) || {};
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}
