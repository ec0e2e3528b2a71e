export { ConfigError, configProblems, loadConfig, loadConfigOrExit } from './load.js';
export * as setting from './settings.js';
export { httpSettings, LOG_LEVELS, storageSettings } from './service.js';
export { documentSettings, renderSettingsTable, type SettingDoc } from './document.js';
export { redactUrl } from './redact.js';
export { type CrashPoint, crashPoints, crashTestSettings } from './crash-point.js';
export { generatedSecret } from './generated-secret.js';
