export { describeApiProcess } from './api-process.js';
export { describeOperationsEndpoints } from './operations.js';
export { heapSnapshotArgs, heapUsedAfterCollection, metricValue, scrapeMetric } from './metrics.js';
export { closedPort } from './ports.js';
export { entryCommand, runToExit, type ServiceProcess, startService } from './process.js';
export { readmePath, readmeSection, replaceSection } from './readme.js';
export { describeSchemaDrift } from './schema-drift.js';
export { checkOpenApiDocument, type OpenApiCheck } from './openapi-check.js';
export { statusLineBeforeBody } from './requests.js';
