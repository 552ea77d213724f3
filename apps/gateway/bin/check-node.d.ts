/** Types of check-node.js (plain JavaScript, so that an old Node can read it). */
export declare const NODE_RANGE: string;
export declare function supportedNode(version: string): boolean;
export declare function unsupportedNodeMessage(version: string): string;
