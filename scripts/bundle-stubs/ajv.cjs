// Stands in for ajv and ajv-formats in the bundles: the MCP SDK's client imports them for its default
// validator of tool results, which lar never makes (core/mcp/connection.ts passes its own, which
// compiles nothing a server sends). Failing loudly beats validating silently with half a library.
'use strict';
function refuse() {
  throw new Error('JSON Schema validation with ajv is not in this build (core/mcp/connection.ts NO_VALIDATION)');
}
class Ajv {
  constructor() {
    refuse();
  }
}
module.exports = Ajv;
module.exports.default = Ajv;
module.exports.Ajv = Ajv;
module.exports.addFormats = refuse;
