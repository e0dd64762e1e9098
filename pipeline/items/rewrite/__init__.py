"""Rewriting source items into the text a spoken benchmark needs: sCMMLU statements (rule-based and LLM rewriters
behind one interface) and Chinese translations of English stories."""
