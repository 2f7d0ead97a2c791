// The part of s3rver (an S3-protocol server in Node, for tests) that test/support/s3.ts uses.
declare module 's3rver' {
  interface BucketConfig {
    name: string;
    configs: (string | Buffer)[];
  }
  interface Options {
    address?: string;
    port?: number;
    silent?: boolean;
    directory: string;
    resetOnClose?: boolean;
    configureBuckets?: BucketConfig[];
  }
  export default class S3rver {
    constructor(options: Options);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
