/** This extension's version, as its package.json says; the bundler inlines the file. */

declare const require: (path: string) => { version: string };

export const VERSION: string = require('../package.json').version;
