/**
 * Every command the extension contributes (package.json `contributes.commands`),
 * one name each: registered in extension/commands.ts, extension/main.ts and
 * extension/agent/connection.ts, named in the server's code lenses. Pure: the
 * architecture test reads it.
 */
export const COMMANDS = {
  verifyTrajectory: 'lean4Agentic.verifyTrajectory',
  openCurrentRun: 'lean4Agentic.openCurrentRun',
  chooseBackend: 'lean4Agentic.chooseBackend',
  restartServer: 'lean4Agentic.restartServer',
  clearEditHints: 'lean4Agentic.clearEditHints',
  revealTrajectoryLine: 'lean4Agentic.revealTrajectoryLine',
  explainLine: 'lean4Agentic.explainLine',
  setApiKey: 'lean4Agentic.setApiKey',
  clearApiKey: 'lean4Agentic.clearApiKey',
  testConnection: 'lean4Agentic.testConnection',
  openEndpointSetting: 'lean4Agentic.openEndpointSetting',
  stopAgent: 'lean4Agentic.stopAgent',
  focusChat: 'lean4Agentic.focusChat',
  restoreCheckpoint: 'lean4Agentic.restoreCheckpoint',
  branchFromCheckpoint: 'lean4Agentic.branchFromCheckpoint',
  openSample: 'lean4Agentic.openSample',
  showApproval: 'lean4Agentic.showApproval',
  forgetMcpInputs: 'lean4Agentic.forgetMcpInputs',
  resetMcpPermissions: 'lean4Agentic.resetMcpPermissions',
} as const;

export type CommandName = keyof typeof COMMANDS;
