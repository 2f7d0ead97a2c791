// The types of bin/v8-flags.js (plain JavaScript: bin/humantask.js runs it before the server loads).
export declare const verifiedNodeMajors: number[];
export declare function startingFlags(): void;
export declare function loaderFlags(): void;
export declare function releaseStartupGarbage(): void;
export declare function fullCollection(): () => void;
