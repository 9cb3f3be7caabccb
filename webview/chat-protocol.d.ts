// The chat protocol's JSON Schemas, which esbuild.mjs generates into the bundle from webview/protocol-schemas.ts
// (a module of the build only: there is no file by this name).
declare module 'lar:chat-protocol' {
  export const fromWebview: object;
  export const toWebview: object;
}
