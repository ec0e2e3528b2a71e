export { describeApiProcess } from './api-process.js';
export { closedPort } from './ports.js';
export { entryCommand, runToExit, startService } from './process.js';
export { readmePath, readmeSection, replaceSection } from './readme.js';
