export { describeApiProcess } from './api-process.js';
export { runToExit, startService, type ExitedProcess, type ServiceProcess } from './process.js';
export { readmePath, readmeSection, replaceSection } from './readme.js';
